/**
 * The rollout bucket of one rollout key for many attribute values: SHA-256 of `<key>.<value>` by sha256x4, for
 * inputs that fit one 64-byte block (55 bytes or fewer) and whose value is ASCII — user and company ids almost always
 * are. Anything else goes to rolloutBucket (node:crypto).
 *
 * Why not node:crypto every time: on the evaluation path a call costs the string concatenation it needs, the
 * flattening of that string, the surrogate check and the binding's argument handling besides the hash itself
 * (docs/BENCHMARKS.md, "Figures behind the code"). Here the key's bytes are laid out once,
 * in sha256x4's prefix table, and a value costs its bytes written once and a quarter of a compression.
 */
import { bucketOfLow20, encodeLikeJsSha256, rolloutBucket } from "./rollout-bucket.js";
import { compressLanes, lanes, prefixAddress, setLane, valueSlot } from "./sha256x4.js";

/** The longest message one block holds: 64 bytes less the 0x80 marker and the 8-byte length. */
const ONE_BLOCK_BYTES = 55;

export class RolloutHasher {
  private readonly prefixLength: number;
  /** The prefix's block in sha256x4's table; unused when the prefix alone is longer than a block holds. */
  private readonly prefixAddress: number;

  /** `prefix` is `<rollout key>.`, the hash input before the value. */
  constructor(private readonly prefix: string) {
    const bytes = encodeLikeJsSha256(prefix);
    this.prefixLength = bytes.length;
    this.prefixAddress = bytes.length <= ONE_BLOCK_BYTES ? prefixAddress(prefix, bytes) : -1;
  }

  /**
   * Sets lane `lane` of sha256x4 to hash `<prefix><value>`, and answers true; false (nothing written) when it does
   * not fit one block or the value is not ASCII — bucketByNodeCrypto() handles those.
   */
  fillLane(value: string, lane: number): boolean {
    const prefixLength = this.prefixLength;
    const length = prefixLength + value.length;
    if (length > ONE_BLOCK_BYTES) return false;
    const slot = valueSlot(value);
    if (slot < 0) return false;
    setLane(lane, this.prefixAddress, prefixLength, slot, value.length);
    return true;
  }

  /** The bucket (0..100000) of `<prefix><value>`, equal to rolloutBucket's. */
  bucket(value: string): number {
    if (!this.fillLane(value, 0)) return this.bucketByNodeCrypto(value);
    compressLanes();
    return bucketOfFirstWord(lanes.output[0]!);
  }

  /** The bucket of an input fillLane refused (longer than a block, or a value not ASCII). */
  bucketByNodeCrypto(value: string): number {
    return rolloutBucket(this.prefix + value);
  }
}

/** The rollout bucket of a digest whose first (big-endian) word is `first`: its first bytes read little-endian. */
export function bucketOfFirstWord(first: number): number {
  return bucketOfLow20(((first >>> 24) & 0xff) | (((first >>> 16) & 0xff) << 8) | (((first >>> 8) & 0x0f) << 16));
}
