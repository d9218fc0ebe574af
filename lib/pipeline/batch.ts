/**
 * A batch answered per member: each call member runs the member stages (classify →
 * select → fetch → canonicalize → verify) on a context of its own, as a single call; this module
 * makes those contexts and writes the one answer array. Pure apart from the contexts it creates.
 *
 * The answer is one element per member that is not a notification, in the order the members came:
 * an answered member's bytes exactly as the node gave them (its agreeing group's first answer,
 * lib/verify/answers/answers.ts confirmedBody), a refused member's JSON-RPC error with its own id, written
 * with the id's bytes as the client wrote them.
 *
 * The seven headers describe the whole array so that each promise holds for every member:
 * - X-Confirmable: true only when every element is an answer that was confirmable and confirmed;
 * - X-Required-Confirmations: 1 whenever X-Confirmable is false (the rule of a single answer: one
 *   member the gateway could not confirm makes the whole array a 1); when every element was
 *   confirmed, the N they were confirmed at. The members of one batch share the route's N, so
 *   that is one number; were it ever not, the smallest, so that every element was agreed by at
 *   least as many providers as the header says;
 * - X-Checked-URLS: the union of the members' agreeing upstreams, in order of first appearance;
 * - X-Forwarded-From: the union of the upstreams whose bytes were returned, in member order;
 * - X-Json-Hash: SHA-256 (hex) of the elements' hashes joined by `,` in order (an answer's hash is
 *   its X-Json-Hash as a single call; a refusal's is the SHA-256 of its bytes);
 * - X-Request-Id: the request's.
 */
import { GatewayError } from '../errors.js';
import { answerOf, newContext, type MemberResult, type RpcContext } from './context.js';
import { confirmedBody } from '../verify/answers/answers.js';
import { sha256Hex } from '../verify/answers/canonical.js';
import { idTextOf } from '../jsonrpc/scan.js';
import type { RpcCall, RpcPayload } from '../jsonrpc/types.js';

/** The payload of one call member: a single call, with the member's own bytes. */
export function memberPayload(call: RpcCall, raw: Buffer): RpcPayload {
  return { calls: [call], batch: false, raw };
}

/** A member's context: the batch's request id, chain and route, its own payload and log. */
export function memberContext(batch: RpcContext, index: number, payload: RpcPayload): RpcContext {
  const ctx = newContext(batch.requestId, batch.log.child({ member: index }));
  ctx.payload = payload;
  if (batch.chain) ctx.chain = batch.chain;
  if (batch.confirmationsOverride !== undefined) ctx.confirmationsOverride = batch.confirmationsOverride;
  if (batch.via !== undefined) ctx.via = batch.via;
  if (batch.finalizedRoute) ctx.finalizedRoute = true;
  if (batch.access !== undefined) ctx.access = batch.access;
  return ctx;
}

export interface BatchAnswer {
  /** The answer array's bytes; undefined when every member was a notification (nothing to say). */
  body: Buffer | undefined;
  confirmable: boolean;
  required: number;
  checked: string[];
  forwarded: string[];
  hash: string;
}

/**
 * The answer array and what its headers say. `errorText` writes a refusal (the error handler's
 * format); `shown` names an upstream (its redacted label, or its URL when redaction is off).
 */
export function batchAnswer(
  results: readonly MemberResult[],
  errorText: (error: GatewayError, idText: string) => string,
  toGatewayError: (error: Error, ctx: RpcContext | undefined) => GatewayError,
  shown: (u: { url: string; label: string }) => string,
): BatchAnswer {
  const parts: Buffer[] = [];
  const hashes: string[] = [];
  const checked = new Set<string>();
  const forwarded = new Set<string>();
  let confirmable = true;
  let required = Infinity;
  for (const r of results) {
    if (r.kind === 'notification') continue;
    if (r.kind === 'error') {
      // A member's refusal carries the member's own id whatever the error says.
      const idText = r.ctx || !(r.error instanceof GatewayError) || r.error.rpcId !== null ? idTextOf(r.raw) : 'null';
      const text = Buffer.from(errorText(toGatewayError(r.error, r.ctx), idText));
      parts.push(text);
      hashes.push(sha256Hex(text.toString('utf8')));
      confirmable = false;
      continue;
    }
    const { payload } = r.ctx;
    const verdict = answerOf(r.ctx);
    if (!verdict || !payload) throw new Error('batchAnswer: an answered member has no verdict');
    parts.push(confirmedBody(verdict.members, payload));
    hashes.push(verdict.hash);
    // A write member names the upstreams it went to (lib/verify/write.ts), as a single write does.
    for (const u of r.ctx.writtenTo ?? verdict.members.map((m) => m.upstream)) checked.add(shown(u));
    forwarded.add(shown(verdict.members[0]!.upstream));
    // a relayed refusal (lib/verify/agreement.ts 'refused') that N did not send alike is not confirmed
    if (!r.ctx.confirmable || verdict.unconfirmed || verdict.members.length < (r.ctx.required ?? 1)) confirmable = false;
    required = Math.min(required, r.ctx.required ?? 1);
  }
  if (parts.length === 0) return { body: undefined, confirmable: false, required: 1, checked: [], forwarded: [], hash: sha256Hex('') };
  const body = Buffer.concat([Buffer.from('['), ...parts.flatMap((p, i) => (i === 0 ? [p] : [comma, p])), Buffer.from(']')]);
  return {
    body,
    confirmable,
    // Not confirmed as a whole: 1, whatever N the confirmed members had (the header is always 1 when X-Confirmable is false).
    required: confirmable && required !== Infinity ? required : 1,
    checked: [...checked],
    forwarded: [...forwarded],
    hash: sha256Hex(hashes.join(',')),
  };
}

const comma = Buffer.from(',');
