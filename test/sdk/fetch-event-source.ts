/**
 * A minimal EventSource over fetch for running the Reflag browser SDK in Node 20 (which has no EventSource): the
 * SDK's `eventSourceFactory` option takes one. It parses the stream as the SSE spec says (blank-line separated
 * blocks, `event:`/`data:` fields, `:` comments) and dispatches `open`, `message` and `error` like a browser does.
 */

type Listener = (event: { data?: string; type: string; target: { readyState: number } }) => void;

export interface OpenedStream {
  url: string;
  status: number | undefined;
  /** Every raw chunk received, in order. */
  received: string[];
  close(): void;
}

/** Returns a factory and the list of streams it opened (for assertions). */
export function fetchEventSourceFactory(init: RequestInit = {}): { factory: (url: string) => { addEventListener(type: string, cb: Listener): void; close(): void }; opened: OpenedStream[] } {
  const opened: OpenedStream[] = [];
  const factory = (url: string) => {
    const listeners = new Map<string, Set<Listener>>();
    const controller = new AbortController();
    const target = { readyState: 0 };
    const stream: OpenedStream = { url, status: undefined, received: [], close: () => close() };
    opened.push(stream);
    const emit = (type: string, data?: string) => {
      for (const listener of listeners.get(type) ?? []) listener({ type, target, ...(data !== undefined ? { data } : {}) });
    };
    const close = () => {
      target.readyState = 2;
      controller.abort();
    };
    const dispatchBlock = (block: string) => {
      let type = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line === "" || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") type = value;
        else if (field === "data") data.push(value);
      }
      if (data.length > 0) emit(type, data.join("\n"));
    };
    void (async () => {
      try {
        const response = await fetch(url, { ...init, headers: { accept: "text/event-stream" }, signal: controller.signal });
        stream.status = response.status;
        if (!response.ok || !response.body) {
          target.readyState = 2;
          emit("error");
          return;
        }
        target.readyState = 1;
        emit("open");
        const decoder = new TextDecoder();
        let buffered = "";
        for await (const chunk of response.body) {
          const text = decoder.decode(chunk as Uint8Array, { stream: true });
          stream.received.push(text);
          buffered += text.replace(/\r\n?/g, "\n");
          let end;
          while ((end = buffered.indexOf("\n\n")) !== -1) {
            dispatchBlock(buffered.slice(0, end));
            buffered = buffered.slice(end + 2);
          }
        }
        if (target.readyState !== 2) {
          target.readyState = 2;
          emit("error");
        }
      } catch {
        if (target.readyState !== 2) {
          target.readyState = 2;
          emit("error");
        }
      }
    })();
    return {
      addEventListener(type: string, cb: Listener) {
        let set = listeners.get(type);
        if (!set) listeners.set(type, (set = new Set()));
        set.add(cb);
      },
      close,
    };
  };
  return { factory, opened };
}
