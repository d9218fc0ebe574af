/**
 * A request id made when the client sent none: a random (version 4) UUID, as `crypto.randomUUID`
 * makes it, from the same CSPRNG, written into one flat string. node's builds each id from some
 * twenty string concatenations (half a kilobyte of short-lived strings per request); this fills a
 * 36-byte buffer from a table and reads it once. Random bytes are drawn 4 KiB at a time.
 */
import { randomFillSync } from 'node:crypto';

const poolBytes = 4096;
const pool = Buffer.allocUnsafe(poolBytes);
let used = poolBytes;
const text = Buffer.allocUnsafe(36);
/** Each byte's two hex digits (ASCII), high then low. */
const hex = Buffer.from(Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0')).join(''), 'latin1');
/** Where each of the 16 bytes goes in the text (the dashes sit at 8, 13, 18 and 23). */
const at = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
text[8] = text[13] = text[18] = text[23] = 0x2d;

/** A new random UUID (version 4, RFC 4122 variant), lower-case, 36 characters. */
export function newRequestId(): string {
  if (used === poolBytes) {
    randomFillSync(pool);
    used = 0;
  }
  const o = used;
  used += 16;
  // (version 4 in byte 6's high nibble; variant 10xx in byte 8's high bits)
  pool[o + 6] = (pool[o + 6]! & 0x0f) | 0x40;
  pool[o + 8] = (pool[o + 8]! & 0x3f) | 0x80;
  for (let i = 0; i < 16; i++) {
    const b = pool[o + i]! << 1;
    const p = at[i]!;
    text[p] = hex[b]!;
    text[p + 1] = hex[b + 1]!;
  }
  return text.toString('latin1', 0, 36);
}
