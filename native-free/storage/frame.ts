import { readSync } from "node:fs";
import { crc32 } from "./crc32.js";

/**
 * The framing shared by log and snapshot files: `[u32 LE payload length][u32 LE CRC-32][payload]`. The CRC covers
 * the length bytes and the payload, so a frame whose length was torn or flipped fails it too. A frame either reads
 * back whole and intact or not at all, which is what lets recovery cut a torn tail at the last good frame.
 */
export const FRAME_HEADER_BYTES = 8;

/** Reading in blocks of this size turns thousands of small frames into a few large reads. */
const READ_BLOCK_BYTES = 1024 * 1024;

/** One frame around `payload`, ready to append. */
export function encodeFrame(payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.set(payload, FRAME_HEADER_BYTES);
  frame.writeUInt32LE(crc32(payload, crc32(frame.subarray(0, 4))), 4);
  return frame;
}

export interface FrameScan {
  /** Offset just past the last whole, intact frame: where a torn or corrupt tail starts. */
  validEnd: number;
  /** Frames read. */
  frames: number;
}

/**
 * Reads the frames of `fd` from `start` up to `size`, handing each payload to `onFrame`, and stops at the first
 * frame that is incomplete or fails its CRC. The payload is a view into a reused buffer: it is valid only during
 * the call, so `onFrame` must copy what it keeps.
 */
export function scanFrames(fd: number, start: number, size: number, onFrame: (payload: Buffer, offset: number) => void): FrameScan {
  let buffer = Buffer.allocUnsafe(READ_BLOCK_BYTES);
  /** File offset of buffer[0], and how many bytes of the file the buffer holds from there. */
  let bufferStart = start;
  let buffered = 0;

  /** Makes bytes [offset, offset + length) of the file available in `buffer`; false if the file is too short. */
  const ensure = (offset: number, length: number): boolean => {
    if (offset + length > size) return false;
    if (offset >= bufferStart && offset + length <= bufferStart + buffered) return true;
    const want = Math.min(Math.max(length, READ_BLOCK_BYTES), size - offset);
    if (buffer.length < want) buffer = Buffer.allocUnsafe(want);
    let got = 0;
    while (got < want) {
      const read = readSync(fd, buffer, got, want - got, offset + got);
      if (read === 0) break;
      got += read;
    }
    bufferStart = offset;
    buffered = got;
    return got >= length;
  };

  let offset = start;
  let frames = 0;
  while (ensure(offset, FRAME_HEADER_BYTES)) {
    const at = offset - bufferStart;
    const length = buffer.readUInt32LE(at);
    const expected = buffer.readUInt32LE(at + 4);
    if (length === 0 || !ensure(offset, FRAME_HEADER_BYTES + length)) break;
    const head = offset - bufferStart;
    const payload = buffer.subarray(head + FRAME_HEADER_BYTES, head + FRAME_HEADER_BYTES + length);
    if (crc32(payload, crc32(buffer.subarray(head, head + 4))) !== expected) break;
    onFrame(payload, offset);
    frames++;
    offset += FRAME_HEADER_BYTES + length;
  }
  return { validEnd: offset, frames };
}
