import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { ServiceError } from "../errors/catalogue.js";
import type { PasswordHash } from "./account-records.js";

export const PASSWORD_MIN_LENGTH = 12;
/** Long enough for any passphrase; short enough that hashing a body's worth of text is not a lever. */
export const PASSWORD_MAX_LENGTH = 1024;

const BLOCK_SIZE = 8;
const PARALLELIZATION = 1;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;
/** Stored hashes outside these bounds are refused rather than computed (a tampered record must not cost 4 GiB). */
const MAX_COST = 20;
/** At most this many hashes at once: each holds 128 × N × r bytes (128 MiB at the default cost). */
const CONCURRENCY = 2;
/** Sign-ins waiting past this get a retryable 503 instead of memory. */
const MAX_WAITING = 64;

function derive(password: string, salt: Buffer, cost: number, blockSize: number, parallelization: number): Promise<Buffer> {
  const N = 2 ** cost;
  const options: ScryptOptions = { N, r: blockSize, p: parallelization, maxmem: 129 * N * blockSize * parallelization + 1024 * 1024 };
  return new Promise((resolve, reject) => scrypt(password.normalize("NFC"), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key))));
}

/**
 * scrypt password hashing (node:crypto, on libuv's thread pool), with a per-hash random salt and the parameters
 * stored beside the hash. Verification spends the same work whether or not the account exists.
 */
export class PasswordHasher {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private dummy: Promise<PasswordHash> | undefined;

  constructor(private readonly cost: number) {}

  async hash(password: string): Promise<PasswordHash> {
    const salt = randomBytes(SALT_BYTES);
    const key = await this.limited(() => derive(password, salt, this.cost, BLOCK_SIZE, PARALLELIZATION));
    return {
      algorithm: "scrypt",
      cost: this.cost,
      blockSize: BLOCK_SIZE,
      parallelization: PARALLELIZATION,
      salt: salt.toString("base64"),
      hash: key.toString("base64"),
    };
  }

  /** Whether `password` matches `stored`; with no stored hash (unknown account) it checks a dummy and answers false. */
  async verify(password: string, stored: PasswordHash | undefined): Promise<boolean> {
    const against = stored ?? (await (this.dummy ??= this.hash(randomBytes(16).toString("hex"))));
    if (against.algorithm !== "scrypt" || against.cost > MAX_COST || against.blockSize > 32 || against.parallelization > 4) return false;
    const expected = Buffer.from(against.hash, "base64");
    const key = await this.limited(() => derive(password, Buffer.from(against.salt, "base64"), against.cost, against.blockSize, against.parallelization));
    return key.length === expected.length && timingSafeEqual(key, expected) && stored !== undefined;
  }

  private async limited<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < CONCURRENCY) this.running++;
    else {
      if (this.waiting.length >= MAX_WAITING) throw new ServiceError("OVERLOADED", "Too many sign-ins at once; retry shortly.", undefined, 1);
      // The slot is handed over by the finishing hash, so nothing can slip in between.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
