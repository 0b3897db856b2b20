import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createNodeFrontEnd } from "../../native-free/http/node-front-end.js";
import type { FrontEnd } from "../../src/http/types.js";
import { describeFrontEndContract, TEST_LIMITS } from "./front-end.contract.js";
import { describeOverLimitContract } from "./over-limit.contract.js";
import { createFakeCore } from "./fake-core.js";
import { sendRaw } from "./http-client.js";

describeFrontEndContract("node:http", createNodeFrontEnd);
describeOverLimitContract("node:http", createNodeFrontEnd);

describe("node:http front end, beyond the contract", () => {
  let frontEnd: FrontEnd;
  let port: number;

  beforeEach(async () => {
    frontEnd = createNodeFrontEnd(createFakeCore(), TEST_LIMITS);
    port = await frontEnd.listen("127.0.0.1", 0);
  });

  afterEach(() => {
    frontEnd.closeAll();
    frontEnd.stopListening();
  });

  it("answers malformed HTTP with the 400 envelope and closes the connection", async () => {
    const reply = await sendRaw(port, "THIS IS NOT HTTP\r\n\r\n");
    expect(reply.status).toBe(400);
    expect(reply.head).toMatch(/\r\nconnection: close/i);
    expect(JSON.parse(reply.body).error.code).toBe("INVALID_REQUEST");
  });

  it("answers a header section over the bound with 414 and closes the connection", async () => {
    const huge = "x".repeat(TEST_LIMITS.maxUrlLength + 20 * 1024);
    const reply = await sendRaw(port, `GET /echo HTTP/1.1\r\nhost: x\r\nx-big: ${huge}\r\n\r\n`);
    expect(reply.status).toBe(414);
  });

  it("refuses an over-limit body announced with Expect: 100-continue without asking for it", async () => {
    const reply = await sendRaw(port, "POST /limited HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: 11\r\n\r\n");
    expect(reply.status).toBe(413);
  });

  it("asks for a within-limit body announced with Expect: 100-continue", async () => {
    const reply = await sendRaw(port, "POST /limited HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: 3\r\n\r\n");
    expect(reply.status).toBe(100);
  });

  it("serves a request without a Host header, as uWebSockets.js does", async () => {
    const reply = await sendRaw(port, "GET /echo HTTP/1.1\r\n\r\n");
    expect(reply.status).toBe(200);
  });
});
