/**
 * Copying an answer into shared memory (what AnswerRing.append does): V8 copies into a SharedArrayBuffer word by word
 * only when source and target offsets are aligned alike, byte by byte otherwise; a plain ArrayBuffer is the baseline.
 * Why the ring's regions start on 8-byte boundaries (src/workers/answer-ring.ts).
 */
import { consume, runMicro, type MicroFigure, type MicroOptions } from "../support/micro.js";

/** About a 50-feature `/features/evaluated` answer. */
const ANSWER_BYTES = 15_000;

export async function benchSharedCopy(options: MicroOptions): Promise<MicroFigure[]> {
  const answer = new Uint8Array(ANSWER_BYTES).map((_, index) => index & 0xff);
  const shared = new Uint8Array(new SharedArrayBuffer(64 * 1024));
  const plain = new Uint8Array(64 * 1024);
  return runMicro(
    "answer copy, 15 KB",
    [
      { name: "into a SharedArrayBuffer at an 8-byte boundary (the ring)", fn: () => consume(shared.set(answer, 8)) },
      { name: "into a SharedArrayBuffer at offset 3 (the ring before)", fn: () => consume(shared.set(answer, 3)) },
      { name: "into a plain ArrayBuffer at offset 3", fn: () => consume(plain.set(answer, 3)) },
    ],
    options,
  );
}
