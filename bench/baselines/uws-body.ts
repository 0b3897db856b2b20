/** How the bare uWebSockets.js baselines read a POST body: every chunk copied, as the real front end must. */
import type { HttpResponse } from "uWebSockets.js";

/** Calls `onBody` with the copied chunks once the last one arrived, unless the client went away first. */
export function whenBodyRead(res: HttpResponse, onBody: (chunks: Buffer[], isAborted: () => boolean) => void): void {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  const chunks: Buffer[] = [];
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast || aborted) return;
    onBody(chunks, () => aborted);
  });
}
