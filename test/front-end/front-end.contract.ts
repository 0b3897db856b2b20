import { Agent } from "node:http";
import { connect } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ApiCore, FrontEnd, FrontEndLimits } from "../../src/http/types.js";
import { BINARY_BODY, createFakeCore, LIMITED_BODY_LIMIT, STREAM_PREAMBLE, type FakeCore } from "./fake-core.js";
import { eventually, jsonOf, openStream, send, sendRaw } from "./http-client.js";

export const TEST_LIMITS: FrontEndLimits = { maxUrlLength: 1024, idleTimeoutSeconds: 10 };

const INTERNAL_ENVELOPE = { success: false, error: { code: "INTERNAL", message: "Internal server error." } };

/**
 * What every FrontEnd must do, over real HTTP on 127.0.0.1: run by `node-front-end.test.ts` and
 * `uws-front-end.test.ts`, so the two front ends answer every client alike.
 */
export function describeFrontEndContract(name: string, create: (core: ApiCore, limits: FrontEndLimits) => FrontEnd): void {
  describe(`FrontEnd contract: ${name}`, () => {
    let core: FakeCore;
    let frontEnd: FrontEnd;
    let port: number;

    beforeEach(async () => {
      core = createFakeCore();
      frontEnd = create(core, TEST_LIMITS);
      port = await frontEnd.listen("127.0.0.1", 0);
    });

    afterEach(() => {
      frontEnd.closeAll();
      frontEnd.stopListening();
    });

    describe("requests", () => {
      it("hands the core the method, the raw path and query, lower-cased headers and the body", async () => {
        const reply = await send(port, {
          method: "POST",
          path: "/echo/a%20b/%C3%A9?x=1&y=%20z&flag&x=2",
          headers: { "X-Custom-Header": "Value", "x-dup": ["first", "second"], "content-type": "text/plain" },
          body: "hello",
        });
        expect(reply.status).toBe(200);
        expect(reply.headers["x-served-by"]).toBe("fake-core");
        const seen = jsonOf(reply);
        expect(seen).toMatchObject({ method: "POST", path: "/echo/a%20b/%C3%A9", query: "x=1&y=%20z&flag&x=2", bodyLength: 5, bodyText: "hello" });
        expect(seen.headers["x-custom-header"]).toBe("Value");
        expect(seen.headers["x-dup"]).toBe("first, second");
        expect(seen.headers["content-type"]).toBe("text/plain");
        expect(Object.keys(seen.headers).every((header: string) => header === header.toLowerCase())).toBe(true);
        expect(seen.remoteAddress).toMatch(/127\.0\.0\.1$/);
      });

      it("passes a header named like an Object.prototype member as sent", async () => {
        const seen = jsonOf(await send(port, { path: "/echo", headers: { constructor: "c", toString: "t" } }));
        expect(seen.headers.constructor).toBe("c");
        expect(seen.headers.tostring).toBe("t");
      });

      it("gives a request without a body a null body and an empty query", async () => {
        const seen = jsonOf(await send(port, { path: "/echo" }));
        expect(seen).toMatchObject({ method: "GET", path: "/echo", query: "", bodyLength: null });
      });

      it("answers an unknown route with the core's 404", async () => {
        const reply = await send(port, { path: "/nowhere" });
        expect(reply.status).toBe(404);
        expect(jsonOf(reply).error.code).toBe("ROUTE_NOT_FOUND");
      });

      it("sends a binary body byte for byte", async () => {
        const reply = await send(port, { path: "/binary" });
        expect(reply.status).toBe(200);
        expect(reply.headers["content-type"]).toBe("application/octet-stream");
        expect(new Uint8Array(reply.body)).toEqual(BINARY_BODY);
      });

      it("serves several requests on one keep-alive connection", async () => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        try {
          const first = await send(port, { path: "/echo", agent });
          const second = await send(port, { path: "/echo", agent });
          expect([first.status, second.status]).toEqual([200, 200]);
          expect(second.localPort).toBe(first.localPort);
        } finally {
          agent.destroy();
        }
      });

      it("accepts a URL of exactly the limit and answers 414 one character over", async () => {
        const atLimit = `/echo/${"a".repeat(TEST_LIMITS.maxUrlLength - "/echo/".length)}`;
        expect((await send(port, { path: atLimit })).status).toBe(200);
        const over = await send(port, { path: `${atLimit}a` });
        expect(over.status).toBe(414);
        expect(jsonOf(over).error.code).toBe("URI_TOO_LONG");
      });
    });

    describe("bodies", () => {
      it("accepts a body of exactly the route's limit", async () => {
        const reply = await send(port, { method: "POST", path: "/limited", body: "x".repeat(LIMITED_BODY_LIMIT) });
        expect(reply.status).toBe(200);
        expect(jsonOf(reply).bodyLength).toBe(LIMITED_BODY_LIMIT);
      });

      it("answers 413 to a declared content-length one byte over the limit", async () => {
        const reply = await send(port, { method: "POST", path: "/limited", body: "x".repeat(LIMITED_BODY_LIMIT + 1) });
        expect(reply.status).toBe(413);
        expect(jsonOf(reply)).toEqual({ success: false, error: { code: "PAYLOAD_TOO_LARGE", message: "The request body is over the limit." } });
      });

      it("accepts a chunked body of exactly the limit", async () => {
        const reply = await sendRaw(port, "POST /limited HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n6\r\nabcdef\r\n4\r\nghij\r\n0\r\n\r\n");
        expect(reply.status).toBe(200);
        expect(JSON.parse(reply.body).bodyLength).toBe(LIMITED_BODY_LIMIT);
      });

      it("answers 413 to a chunked body one byte over the limit", async () => {
        const reply = await sendRaw(port, "POST /limited HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n6\r\nabcdef\r\n5\r\nghijk\r\n0\r\n\r\n");
        expect(reply.status).toBe(413);
        expect(JSON.parse(reply.body).error.code).toBe("PAYLOAD_TOO_LARGE");
      });

      it("ignores the body of a route that reads none", async () => {
        const reply = await send(port, { method: "POST", path: "/no-body", body: "x".repeat(5000) });
        expect(reply.status).toBe(200);
        expect(jsonOf(reply)).toEqual({ bodyIsNull: true });
      });
    });

    describe("handler failures", () => {
      it("answers 500 with the error envelope when a handler throws, and keeps serving", async () => {
        const thrown = await send(port, { path: "/throw" });
        expect(thrown.status).toBe(500);
        expect(thrown.headers["content-type"]).toBe("application/json");
        expect(jsonOf(thrown)).toEqual(INTERNAL_ENVELOPE);
        const rejected = await send(port, { path: "/reject" });
        expect(rejected.status).toBe(500);
        expect(jsonOf(rejected)).toEqual(INTERNAL_ENVELOPE);
        expect((await send(port, { path: "/echo" })).status).toBe(200);
        expect(frontEnd.inFlight()).toBe(0);
      });
    });

    describe("in-flight requests", () => {
      it("counts a request from arrival until it is answered", async () => {
        expect(frontEnd.inFlight()).toBe(0);
        const pending = Promise.all([send(port, { path: "/async" }), send(port, { path: "/async" })]);
        await eventually(() => frontEnd.inFlight() === 2);
        core.releaseAsync();
        const replies = await pending;
        expect(replies.map((reply) => reply.status)).toEqual([200, 200]);
        await eventually(() => frontEnd.inFlight() === 0);
      });

      it("stops counting a request whose client went away", async () => {
        const socket = connect(port, "127.0.0.1");
        socket.on("error", () => undefined);
        socket.write("GET /async HTTP/1.1\r\nhost: x\r\n\r\n");
        await eventually(() => frontEnd.inFlight() === 1);
        socket.destroy();
        await eventually(() => frontEnd.inFlight() === 0);
        // The handler's late answer goes nowhere and breaks nothing.
        core.releaseAsync();
        expect((await send(port, { path: "/echo" })).status).toBe(200);
      });

      it("refuses new connections after stopListening", async () => {
        frontEnd.stopListening();
        await expect(send(port, { path: "/echo" })).rejects.toMatchObject({ code: "ECONNREFUSED" });
      });
    });

    describe("streams", () => {
      it("sends status and headers, then each event in order, and ends", async () => {
        const stream = await openStream(port, "/stream");
        expect(stream.status).toBe(200);
        expect(stream.headers["content-type"]).toBe("text/event-stream");
        expect(stream.headers["cache-control"]).toBe("no-cache");
        await stream.ended;
        expect(stream.chunks.join("")).toBe(`${STREAM_PREAMBLE}data: 1\n\ndata: 2\n\ndata: 3\n\n`);
        expect(core.streamCloses).toBe(1);
        // A stream does not count as in flight once it has started.
        expect(frontEnd.inFlight()).toBe(0);
      });

      it("sends the headers before the first event", async () => {
        const stream = await openStream(port, "/stream-open");
        expect(stream.status).toBe(200);
        await eventually(() => stream.chunks.join("") === STREAM_PREAMBLE);
        await eventually(() => core.openStreams.length === 1);
        expect(core.openStreams[0]!.write("data: late\n\n")).toBe(true);
        await eventually(() => stream.chunks.join("") === `${STREAM_PREAMBLE}data: late\n\n`);
        stream.destroy();
      });

      it("calls onClose once when the client disconnects", async () => {
        const stream = await openStream(port, "/stream-open");
        await eventually(() => core.openStreams.length === 1);
        stream.destroy();
        await eventually(() => core.streamCloses === 1);
        const sink = core.openStreams[0]!;
        // Writing to a closed stream is refused, not thrown; ending it again does not call onClose again.
        expect(sink.write("data: gone\n\n")).toBe(false);
        sink.end();
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(core.streamCloses).toBe(1);
      });

      it("ends open streams on closeAll", async () => {
        const stream = await openStream(port, "/stream-open");
        await eventually(() => core.openStreams.length === 1);
        frontEnd.closeAll();
        await stream.ended;
        await eventually(() => core.streamCloses === 1);
      });
    });
  });
}
