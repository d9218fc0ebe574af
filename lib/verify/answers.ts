/**
 * Upstream body → a vote (canonical form and hash) or the reason it cannot vote. Pure.
 * A body counts as a vote only if it is JSON-RPC in the right shape for the request: the same id
 * (every member of a batch, matched by id and put in request order) and a result or an error.
 * An error that says the provider itself is in trouble (rate limit, internal error) is a
 * failure, not a vote, so another upstream is asked instead. An error that refuses this one
 * request as too large for the provider (a wide eth_getLogs: "query returned more than 10000
 * results", "block range too large", "response size exceeded") is not a vote either, but a
 * `refused` failure: it says nothing about the provider's health, and when every upstream refuses
 * the client gets the refusal as the node gave it.
 */
import type { RpcCall, RpcPayload } from '../jsonrpc/types.js';
import { canonicalForm, sha256Hex, type Answer } from './canonical.js';

export type Assessment =
  | { ok: true; canonical: string; hash: string }
  /** refused: the provider refused this request as too large; `hash` (single calls) as a vote's would be. */
  | { ok: false; reason: string; refused?: { hash?: string } };

/** JSON-RPC error codes that describe the provider's state rather than the answer. */
const providerTroubleCodes = new Set([-32005, -32603, 429]);
const providerTroubleMessage = /rate.?limit|too many requests|exceeded .*capacity|request limit|quota/i;
/** A refusal of this request's size or range (the limits providers put on eth_getLogs and kin). */
const refusalMessage =
  /query returned more than|(block|blocks|query) range|range (is )?too (large|wide|big)|too (large|wide|many) (a )?(block )?(range|blocks|results|logs)|response size|results? (set )?(is )?too large|more than \d[\d,]* (results|logs|blocks)|limit(ed)? (the|your) (query|range)|is limited to (a )?[\d,]+|exceeds? max(imum)? (results|logs|blocks|range)|query timeout exceeded/i;

/** An answerOf verdict: the provider refused this request (a failure that is not the provider's). */
class Refusal {
  constructor(readonly reason: string, readonly answer: Answer) {}
}

export function assessBody(body: Buffer | string, payload: RpcPayload): Assessment {
  try {
    return assess(body, payload);
  } catch (err) {
    // RangeError from a pathologically nested answer: not a vote, and never a crash.
    return { ok: false, reason: `unusable answer: ${(err as Error).message}` };
  }
}

function assess(body: Buffer | string, payload: RpcPayload): Assessment {
  let value: unknown;
  try {
    value = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return { ok: false, reason: `not JSON: ${preview(body)}` };
  }
  if (!payload.batch) {
    const call = payload.calls[0]!;
    const answer = answerOf(value, call);
    if (typeof answer === 'string') return { ok: false, reason: answer };
    if (answer instanceof Refusal) return { ok: false, reason: answer.reason, refused: { hash: sha256Hex(canonicalForm(call.method, answer.answer)) } };
    const canonical = canonicalForm(call.method, answer);
    return { ok: true, canonical, hash: sha256Hex(canonical) };
  }
  if (!Array.isArray(value)) {
    const message = errorMessage(value);
    return { ok: false, reason: message ? `answered the batch with one error: ${message}` : 'answered a batch with a non-array' };
  }
  // Every member must answer a call that was asked, once: a repeated id could smuggle a second
  // answer past the check (clients read the first), and an id nobody asked is not an answer.
  const asked = new Set(payload.calls.map((c) => idKey(c.id)));
  const byId = new Map<string, unknown>();
  for (const member of value) {
    const id = member !== null && typeof member === 'object' ? (member as { id?: unknown }).id : undefined;
    const key = idKey(id);
    if (!asked.has(key)) return { ok: false, reason: `batch answer has id ${JSON.stringify(id ?? null)}, which was not asked (an extra member)` };
    if (byId.has(key)) return { ok: false, reason: `batch answer has id ${JSON.stringify(id)} more than once (a duplicate member)` };
    byId.set(key, member);
  }
  const members: string[] = [];
  for (const call of payload.calls) {
    const member = byId.get(idKey(call.id));
    if (member === undefined) return { ok: false, reason: `no answer for batch id ${JSON.stringify(call.id)}` };
    const answer = answerOf(member, call);
    if (typeof answer === 'string') return { ok: false, reason: `batch id ${JSON.stringify(call.id)}: ${answer}` };
    // A refused member is not the provider's failure either; the batch is not relayed as a refusal.
    if (answer instanceof Refusal) return { ok: false, reason: `batch id ${JSON.stringify(call.id)}: ${answer.reason}`, refused: {} };
    members.push(canonicalForm(call.method, answer));
  }
  const canonical = `[${members.join(',')}]`;
  return { ok: true, canonical, hash: sha256Hex(canonical) };
}

function idKey(id: unknown): string {
  return `${typeof id}:${String(id)}`;
}

/** The answer in a response object, or a string saying what is wrong with it. */
function answerOf(value: unknown, call: RpcCall): Answer | Refusal | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON-RPC response object';
  const obj = value as Record<string, unknown>;
  if (obj.id !== call.id) return `wrong id ${JSON.stringify(obj.id)} (expected ${JSON.stringify(call.id)})`;
  if ('error' in obj && obj.error !== undefined && obj.error !== null) {
    const error = obj.error as Record<string, unknown>;
    if (typeof error !== 'object' || typeof error.code !== 'number') return 'error without a numeric code';
    const message = String(error.message ?? '');
    if (error.code !== 3 && !/revert/i.test(message) && !providerTroubleMessage.test(message) && refusalMessage.test(message)) {
      return new Refusal(`refused as too large: ${error.code}: ${message.slice(0, 200)}`, { error: { code: error.code, data: error.data } });
    }
    // A contract's revert reason may say "rate limit" too: that is an answer, not provider trouble.
    const trouble = providerTroubleCodes.has(error.code) || (error.code !== 3 && !/revert/i.test(message) && providerTroubleMessage.test(message));
    if (trouble) {
      return `provider error ${error.code}: ${message.slice(0, 200)}`;
    }
    return { error: { code: error.code, data: error.data } };
  }
  if (!('result' in obj)) return 'neither result nor error';
  return { result: obj.result };
}

function errorMessage(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const error = (value as { error?: { message?: unknown } }).error;
  return typeof error?.message === 'string' ? error.message : undefined;
}

function preview(body: Buffer | string): string {
  const text = (typeof body === 'string' ? body : body.subarray(0, 120).toString('utf8')).replace(/\s+/g, ' ').trim();
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
