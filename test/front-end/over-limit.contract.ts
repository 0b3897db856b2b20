import { connect } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { drainBound } from "../../src/http/over-limit-body.js";
import type { ApiCore, FrontEnd, FrontEndLimits } from "../../src/http/types.js";
import { createFakeCore, LIMITED_BODY_LIMIT } from "./fake-core.js";
import { jsonOf, send, sendInPieces, sendRaw, type Reply } from "./http-client.js";

/** Short, so a client that stops mid-body is answered within the test's time. */
const DRAIN_MS = 400;
const LIMITS: FrontEndLimits = { maxUrlLength: 1024, idleTimeoutSeconds: 10, overLimitDrainMs: DRAIN_MS };
const MiB = 1024 * 1024;
const TOO_LARGE = { success: false, error: { code: "PAYLOAD_TOO_LARGE", message: "The request body is over the limit." } };

function expectRefused(reply: Reply): void {
  expect(reply.status).toBe(413);
  expect(jsonOf(reply)).toEqual(TOO_LARGE);
  expect(reply.headers.connection).toBe("close");
}

/**
 * A body over its route's limit (src/http/over-limit-body.ts): every client that sends it whole reads its 413, however
 * it writes it, because the front end drains the rest before answering and closing. Run by both front ends' tests.
 */
export function describeOverLimitContract(name: string, create: (core: ApiCore, limits: FrontEndLimits) => FrontEnd): void {
  describe(`over-limit bodies: ${name}`, () => {
    let frontEnd: FrontEnd;
    let port: number;

    beforeEach(async () => {
      frontEnd = create(createFakeCore(), LIMITS);
      port = await frontEnd.listen("127.0.0.1", 0);
    });

    afterEach(() => {
      frontEnd.closeAll();
      frontEnd.stopListening();
    });

    for (const declareLength of [true, false]) {
      const framing = declareLength ? "a declared length" : "chunked";
      it(`answers 413 to node:http clients writing 2.4 MB and 12 MB in 1 MiB pieces with ${framing}, every time`, async () => {
        for (const totalBytes of [2.4e6, 12e6]) {
          for (let attempt = 0; attempt < 4; attempt++) {
            expectRefused(await sendInPieces(port, { path: "/limited", totalBytes, pieceBytes: MiB, declareLength }));
          }
        }
        expect(frontEnd.inFlight()).toBe(0);
      });

      it(`answers 413 to a slow client writing 64 KiB pieces with pauses, with ${framing}`, async () => {
        expectRefused(await sendInPieces(port, { path: "/limited", totalBytes: 8 * 64 * 1024, pieceBytes: 64 * 1024, pauseMs: 15, declareLength }));
      });
    }

    it("answers 413 to eight such uploads at once and keeps serving", async () => {
      const uploads = Array.from({ length: 8 }, (_, index) => sendInPieces(port, { path: "/limited", totalBytes: 3 * MiB, pieceBytes: MiB, declareLength: index % 2 === 0 }));
      for (const reply of await Promise.all(uploads)) expectRefused(reply);
      expect((await send(port, { path: "/echo" })).status).toBe(200);
    });

    it("answers 413 over a raw socket that writes the body in several pieces", async () => {
      const body = "y".repeat(300_000);
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1");
        let received = "";
        socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
        socket.on("close", () => resolve(received));
        socket.on("error", reject);
        socket.write(`POST /limited HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n\r\n`);
        let at = 0;
        const next = () => {
          if (at >= body.length) return;
          socket.write(body.slice(at, at + 50_000), () => setTimeout(next, 5));
          at += 50_000;
        };
        next();
      });
      expect(reply).toMatch(/^HTTP\/1\.1 413 /);
      expect(reply.toLowerCase()).toContain("connection: close");
      expect(reply).toContain('"PAYLOAD_TOO_LARGE"');
    });

    it("answers 413 at once to a declared length past the drain bound, before any body is sent", async () => {
      const started = Date.now();
      const reply = await sendRaw(port, `POST /limited HTTP/1.1\r\nhost: x\r\ncontent-length: ${drainBound(LIMITED_BODY_LIMIT) + 1}\r\n\r\n`);
      expect(reply.status).toBe(413);
      expect(Date.now() - started).toBeLessThan(DRAIN_MS);
    });

    it("answers 413 once the drain time is up to a client that stopped sending its over-limit body", async () => {
      const reply = await sendRaw(port, "POST /limited HTTP/1.1\r\nhost: x\r\ncontent-length: 1000000\r\n\r\nabc");
      expect(reply.status).toBe(413);
      expect(JSON.parse(reply.body)).toEqual(TOO_LARGE);
      expect(frontEnd.inFlight()).toBe(0);
    });

    it("cuts off a chunked body that runs past the drain bound without waiting for its end, and keeps serving", async () => {
      const outcome = await new Promise<{ received: string; sent: number }>((resolve) => {
        const socket = connect(port, "127.0.0.1");
        let received = "";
        let sent = 0;
        socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
        socket.on("close", () => resolve({ received, sent }));
        // Past the bound the answer may be lost to the reset that follows it: that is what the bound allows.
        socket.on("error", () => undefined);
        socket.write("POST /limited HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n");
        const piece = `${MiB.toString(16)}\r\n${"z".repeat(MiB)}\r\n`;
        const next = () => {
          if (received !== "" || socket.destroyed || sent > drainBound(LIMITED_BODY_LIMIT) + 16 * MiB) {
            socket.destroy();
            return;
          }
          sent += MiB;
          socket.write(piece, () => setImmediate(next));
        };
        next();
      });
      expect(outcome.received === "" || /^HTTP\/1\.1 413 /.test(outcome.received), outcome.received.slice(0, 80)).toBe(true);
      // Stopped near the bound, not at the 16 MiB the client would have gone on to send past it.
      expect(outcome.sent).toBeLessThan(drainBound(LIMITED_BODY_LIMIT) + 16 * MiB);
      expect((await send(port, { path: "/echo" })).status).toBe(200);
    });
  });
}
