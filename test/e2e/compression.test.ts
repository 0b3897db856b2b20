/**
 * Large evaluation answers are compressed when the client accepts it (brotli preferred, gzip otherwise), small ones
 * and clients that accept neither get the plain answer; all of them decode to the same JSON.
 */
import { request as httpRequest } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { useAppServer } from "../support/app-server.js";

/** A raw GET (fetch would decode the body and hide the header). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("compression of evaluation answers", () => {
  // A low threshold, so that a few features make an answer "large"; the default is in the docs.
  const fixture = useAppServer({ env: { SWITCHYARD_COMPRESS_MIN_BYTES: "2000" } });
  let url: (query: string) => string;

  beforeAll(async () => {
    const { app, production } = fixture.keys;
    for (let index = 0; index < 12; index++) {
      await fixture.admin("PUT", `/admin/apps/${app.id}/features/feature-${index}`, { description: `feature ${index}` });
      await fixture.admin("PUT", `/admin/environments/${production.id}/features/feature-${index}/targeting`, {
        rules: [{ filter: { type: "rolloutPercentage", key: `feature-${index}`, partialRolloutAttribute: "user.id", partialRolloutThreshold: 50_000 } }],
      });
    }
    url = (query) => `${fixture.server.url}/features/evaluated?publishableKey=${production.publishableKey}&${query}`;
  });

  it("answers large answers in brotli or gzip as accepted, equal to the plain answer", async () => {
    const plain = await rawGet(url("context.user.id=u1"), {});
    expect(plain.status).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(2000);
    const expected = JSON.parse(plain.body.toString());
    expect(Object.keys(expected.features)).toHaveLength(12);

    const br = await rawGet(url("context.user.id=u1"), { "accept-encoding": "gzip, deflate, br" });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers.vary).toMatch(/Accept-Encoding/i);
    expect(br.body.length).toBeLessThan(plain.body.length / 4);
    expect(JSON.parse(brotliDecompressSync(br.body).toString())).toEqual(expected);

    const gzip = await rawGet(url("context.user.id=u1"), { "accept-encoding": "gzip;q=1, br;q=0" });
    expect(gzip.headers["content-encoding"]).toBe("gzip");
    expect(JSON.parse(gunzipSync(gzip.body).toString())).toEqual(expected);

    const refused = await rawGet(url("context.user.id=u1"), { "accept-encoding": "identity" });
    expect(refused.headers["content-encoding"]).toBeUndefined();
    expect(JSON.parse(refused.body.toString())).toEqual(expected);
  });

  it("sends small answers as they are", async () => {
    const small = await rawGet(url("key=feature-3&context.user.id=u2"), { "accept-encoding": "br" });
    expect(small.status).toBe(200);
    expect(small.headers["content-encoding"]).toBeUndefined();
    expect(Object.keys(JSON.parse(small.body.toString()).features)).toEqual(["feature-3"]);
  });

  it("serves a repeated query from the answer cache in the encoding each client asked for", async () => {
    for (let round = 0; round < 3; round++) {
      const br = await rawGet(url("context.user.id=u3"), { "accept-encoding": "br" });
      const plain = await rawGet(url("context.user.id=u3"), {});
      expect(br.headers["content-encoding"]).toBe("br");
      expect(plain.headers["content-encoding"]).toBeUndefined();
      expect(JSON.parse(brotliDecompressSync(br.body).toString())).toEqual(JSON.parse(plain.body.toString()));
    }
  });
});
