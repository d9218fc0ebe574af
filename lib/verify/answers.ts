/**
 * Upstream body → a vote (canonical form and hash) or the reason it cannot vote. Pure.
 * A body counts as a vote only if it is JSON-RPC in the right shape for the request: the same id
 * (every member of a batch, matched by id and put in request order) and a result or an error.
 * An error that says the provider itself is in trouble (rate limit, internal error) is a
 * failure, not a vote, so another upstream is asked instead.
 */
import type { RpcCall, RpcPayload } from '../jsonrpc/types.js';
import { canonicalForm, sha256Hex, type Answer } from './canonical.js';

export type Assessment = { ok: true; canonical: string; hash: string } | { ok: false; reason: string };

/** JSON-RPC error codes that describe the provider's state rather than the answer. */
const providerTroubleCodes = new Set([-32005, -32603, 429]);
const providerTroubleMessage = /rate.?limit|too many requests|exceeded .*capacity|request limit|quota/i;

/**
 * `scrub` hides provider keys in what a reason quotes of the body; it runs before any cut, so
 * that a key cut in two cannot leave its first half behind.
 */
export function assessBody(body: Buffer | string, payload: RpcPayload, scrub: (text: string) => string = (text) => text): Assessment {
  try {
    return assess(body, payload, scrub);
  } catch (err) {
    // RangeError from a pathologically nested answer: not a vote, and never a crash.
    return { ok: false, reason: `unusable answer: ${(err as Error).message}` };
  }
}

function assess(body: Buffer | string, payload: RpcPayload, scrub: (text: string) => string): Assessment {
  let value: unknown;
  try {
    value = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return { ok: false, reason: `not JSON: ${preview(body, scrub)}` };
  }
  if (!payload.batch) {
    const call = payload.calls[0]!;
    const answer = answerOf(value, call, scrub);
    if (typeof answer === 'string') return { ok: false, reason: answer };
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
    const answer = answerOf(member, call, scrub);
    if (typeof answer === 'string') return { ok: false, reason: `batch id ${JSON.stringify(call.id)}: ${answer}` };
    members.push(canonicalForm(call.method, answer));
  }
  const canonical = `[${members.join(',')}]`;
  return { ok: true, canonical, hash: sha256Hex(canonical) };
}

function idKey(id: unknown): string {
  return `${typeof id}:${String(id)}`;
}

/** The answer in a response object, or a string saying what is wrong with it. */
function answerOf(value: unknown, call: RpcCall, scrub: (text: string) => string): Answer | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON-RPC response object';
  const obj = value as Record<string, unknown>;
  if (obj.id !== call.id) return `wrong id ${JSON.stringify(obj.id)} (expected ${JSON.stringify(call.id)})`;
  if ('error' in obj && obj.error !== undefined && obj.error !== null) {
    const error = obj.error as Record<string, unknown>;
    if (typeof error !== 'object' || typeof error.code !== 'number') return 'error without a numeric code';
    const message = String(error.message ?? '');
    // A contract's revert reason may say "rate limit" too: that is an answer, not provider trouble.
    const trouble = providerTroubleCodes.has(error.code) || (error.code !== 3 && !/revert/i.test(message) && providerTroubleMessage.test(message));
    if (trouble) {
      return `provider error ${error.code}: ${scrub(message).slice(0, 200)}`;
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

function preview(body: Buffer | string, scrub: (text: string) => string): string {
  // The first 4 KB are scrubbed, then cut: a key past 120 bytes still could not be cut in two.
  const text = scrub(typeof body === 'string' ? body.slice(0, 4096) : body.subarray(0, 4096).toString('utf8')).replace(/\s+/g, ' ').trim();
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
