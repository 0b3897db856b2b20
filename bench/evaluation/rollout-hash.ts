/**
 * The rollout bucket: one-shot crypto.hash with a latin1 digest (what rolloutBucket does) against the same with a
 * Buffer digest and against createHash, and a hit in a field's bucket rows (one lookup serves every rollout on the field).
 */
import { createHash, hash } from "node:crypto";
import { rolloutBucket } from "../../src/evaluation/rollout-bucket.js";
import { FieldBuckets } from "../../src/evaluation/rollout-hash.js";
import { consume, runMicro, type MicroFigure, type MicroOptions } from "../support/micro.js";

function bucketWithCreateHash(input: string): number {
  const digest = createHash("sha256").update(input).digest();
  return Math.floor(((digest.readUInt32LE(0) & 0xfffff) / 0xfffff) * 100_000);
}

function bucketWithBufferDigest(input: string): number {
  const digest = hash("sha256", input, "buffer");
  return Math.floor(((digest.readUInt32LE(0) & 0xfffff) / 0xfffff) * 100_000);
}

export async function benchRolloutHash(options: MicroOptions): Promise<MicroFigure[]> {
  // Distinct inputs, so that nothing below the hash can remember an answer.
  const inputs = Array.from({ length: 100_000 }, (_, index) => `feature-${index % 50}.u${index}`);
  const rows = new FieldBuckets();
  rows.addColumn();
  const returning = inputs.slice(0, 1000);
  for (const input of returning) rows.row(input);
  let next = 0;
  return runMicro(
    "rollout hash",
    [
      { name: "rolloutBucket (crypto.hash one-shot, latin1 digest)", fn: () => consume(rolloutBucket(inputs[next++ % inputs.length]!)) },
      { name: "crypto.hash one-shot, Buffer digest", fn: () => consume(bucketWithBufferDigest(inputs[next++ % inputs.length]!)) },
      { name: "createHash('sha256') bucket", fn: () => consume(bucketWithCreateHash(inputs[next++ % inputs.length]!)) },
      { name: "FieldBuckets row hit", fn: () => consume(rows.row(returning[next++ % returning.length]!)![0]!) },
    ],
    options,
  );
}
