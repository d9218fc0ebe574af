/**
 * An answer's bytes under another request's id: the answer one client's request got, given to
 * another client that asked the same question (a merged request, a cached answer). Only the
 * top-level `id` value is replaced (located by the byte scan, scan.ts); every other byte, numbers
 * included, stays as the upstream sent it.
 */
import { scanJson } from './scan.js';
import type { RpcId } from './types.js';

/**
 * `body` (one JSON-RPC response object) with `id` in place of its own id; undefined when the
 * body is not one object with exactly one `id` member (an answer that voted always is).
 */
export function withReplyId(body: Buffer, id: RpcId): Buffer | undefined {
  const scan = scanJson(body, { ids: true });
  if (scan.kind !== 'object' || scan.truncated || scan.ids.length !== 1) return undefined;
  const span = scan.ids[0]!;
  const text = JSON.stringify(id);
  if (span.text === text) return body;
  return Buffer.concat([body.subarray(0, span.start), Buffer.from(text), body.subarray(span.end)]);
}
