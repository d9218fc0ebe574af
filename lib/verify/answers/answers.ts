/**
 * Upstream body → a vote (canonical form and hash) or the reason it cannot vote. Pure.
 * A body counts as a vote only if it is JSON-RPC in the right shape for the request: the same id
 * (every member of a batch, matched by id and put in request order) and a result or an error.
 * A node's JSON-RPC error is a vote like a result. Only the errors of the table in trouble.ts are
 * not: provider trouble (rate limit, capacity, a lagging node) is a failure, so another upstream
 * is asked instead; a refusal of this one request (a wide eth_getLogs: "query returned more than
 * 10000 results"; a method the provider does not serve) is a `refused` failure: it says nothing
 * about the provider's health, and when every upstream refuses the client gets the refusal as the
 * node gave it.
 *
 * The JSON text is read losslessly: a key repeated in an object makes the answer a failure
 * (parsers differ on which value counts: JSON.parse keeps the last, others the first), and so do
 * two keys that differ only in letter case (`result` and `Result`, `to` and `To`): Go's
 * encoding/json and .NET's Newtonsoft read them as one key, the last one winning, so a client
 * would read a value that was never compared; for the same reason, so does a key those parsers
 * read as a member of the response or of its error (`ERROR`, `DATA`) without that member's own
 * spelling beside it. Every number is compared as written. The client
 * gets these bytes, not the canonical form: so an answer that is not UTF-8 (read as U+FFFD here,
 * as something else by another decoder) and one with both an `error` and a non-null `result`
 * (clients differ on which they read) cannot vote either. JSON.parse does the parsing (V8's, the fastest
 * there is) and one scan of the text proves the keys and numbers (readJson); only an answer with
 * a number JSON.parse would change is parsed a second time, those numbers swapped for marker
 * strings, then for JsonNumbers.
 */
import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { foldKey } from '../../jsonrpc/parse.js';
import type { RpcCall, RpcPayload } from '../../jsonrpc/types.js';
import { canonicalForm, JsonNumber, sha256Hex, type Answer, type IgnoredValue } from './canonical.js';
import { type IgnoredFields } from './compared-fields.js';
import { errorKind } from './trouble.js';
import { withReplyIdText } from '../../jsonrpc/reply.js';

export type Assessment =
  | {
      ok: true;
      canonical: string;
      hash: string;
      /** The fields left out of the comparison that the answer carries (ignored, or outside the execution-apis schema; path and value); absent when none. */
      ignored?: IgnoredValue[];
    }
  /** refused: the provider refused this request as too large; `hash` (single calls) as a vote's would be. */
  | { ok: false; reason: string; refused?: { hash?: string } };

/** An answerOf verdict: the provider refused this request (a failure that is not the provider's). */
export class Refusal {
  constructor(readonly reason: string, readonly answer: Answer) {}
}

/**
 * `ignored`: the chain's ignored fields (canonical.ts). `scrub` hides provider keys in what a
 * reason quotes of the body; it runs before any cut, so that a key cut in two cannot leave its
 * first half behind. `asAnswer`: an error the trouble table counts as provider trouble is the
 * node's answer after all when its message passes (a block above every head: "header not found"
 * is what every node honestly says).
 */
export function assessBody(
  body: Buffer | string,
  payload: Pick<RpcPayload, 'batch' | 'calls'>,
  ignored?: IgnoredFields,
  scrub: (text: string) => string = (text) => text,
  asAnswer?: (message: string) => boolean,
): Assessment {
  try {
    return assess(body, payload, ignored, scrub, asAnswer);
  } catch (err) {
    // RangeError from a pathologically nested answer: not a vote, and never a crash.
    return { ok: false, reason: `unusable answer: ${(err as Error).message}` };
  }
}

function assess(body: Buffer | string, payload: Pick<RpcPayload, 'batch' | 'calls'>, ignored: IgnoredFields | undefined, scrub: (text: string) => string, asAnswer?: (message: string) => boolean): Assessment {
  let text: string;
  if (typeof body === 'string') text = body;
  else {
    text = body.toString('utf8');
    // The bytes are forwarded as they are: what they say must not depend on the client's decoder.
    // Checked in the decoding's pass for the usual answer: decoding puts U+FFFD where bytes are
    // not UTF-8, and a text of ASCII only (one byte per character in V8) cannot hold one, which
    // indexOf answers at once. Only a text holding a U+FFFD (sent, or made by the decoder) is
    // checked against the bytes again.
    if (text.indexOf('\uFFFD') >= 0 && !isUtf8(body)) return { ok: false, reason: `not UTF-8: ${preview(body, scrub)}` };
  }
  const read = readJson(text);
  if ('reason' in read) return { ok: false, reason: read.reason === notJson ? `not JSON: ${preview(body, scrub)}` : read.reason };
  const value = read.value;
  const found: IgnoredValue[] = [];
  const vote = (canonical: string): Assessment =>
    found.length > 0 ? { ok: true, canonical, hash: sha256Hex(canonical), ignored: found } : { ok: true, canonical, hash: sha256Hex(canonical) };
  if (!payload.batch) {
    const call = payload.calls[0]!;
    const answer = answerOf(value, call, scrub, asAnswer);
    if (typeof answer === 'string') return { ok: false, reason: answer };
    if (answer instanceof Refusal) return { ok: false, reason: answer.reason, refused: { hash: sha256Hex(canonicalForm(call.method, answer.answer)) } };
    return vote(canonicalForm(call.method, answer, { ignored, found }));
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
  for (const [i, call] of payload.calls.entries()) {
    const member = byId.get(idKey(call.id));
    if (member === undefined) return { ok: false, reason: `no answer for batch id ${JSON.stringify(call.id)}` };
    const answer = answerOf(member, call, scrub, asAnswer);
    if (typeof answer === 'string') return { ok: false, reason: `batch id ${JSON.stringify(call.id)}: ${answer}` };
    // A refused member is not the provider's failure either; the batch is not relayed as a refusal.
    if (answer instanceof Refusal) return { ok: false, reason: `batch id ${JSON.stringify(call.id)}: ${answer.reason}`, refused: {} };
    members.push(canonicalForm(call.method, answer, { ignored, found, path: [i] }));
  }
  return vote(`[${members.join(',')}]`);
}

const notJson = 'not JSON';

/**
 * The JSON text's value, read losslessly, or why it cannot vote. JSON.parse first (fast, and it
 * rejects what is not JSON); then scanText proves, in one pass, that no key repeats (JSON.parse
 * keeps one member per key, so the tree has fewer members than the text has `:` outside strings
 * exactly when one repeats) and that every number reads back as written; the walk that counts
 * the tree's members also finds two keys of one object that differ only in letter case. Only if
 * some number does not read back is the text parsed again, such numbers kept as JsonNumbers.
 */
export function readJson(text: string, inexactAllowed = maxInexactNumbers): { value: unknown; inexact: number } | { reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { reason: notJson };
  }
  const scan = scanText(text, inexactAllowed);
  // (before the keys are checked: a list read in slices, sliced.ts, can then give this verdict
  // from the first slice over the count on, having only to prove the other slices JSON)
  if (scan.spelled > inexactAllowed) return { reason: tooManyInexact };
  foldClash = undefined;
  let members: number;
  try {
    members = countMembers(value);
  } finally {
    forgetKeys();
  }
  if (scan.members !== members) {
    return { reason: 'an object has a duplicate key: JSON parsers differ on which of its values counts, so the answer cannot vote' };
  }
  if (foldClash !== undefined) {
    const [a, b] = foldClash as [string, string];
    foldClash = undefined;
    return {
      reason: `an object has the keys ${JSON.stringify(a)} and ${JSON.stringify(b)}, which differ only in letter case: JSON parsers differ on whether they are one key (Go's reads the last), so the answer cannot vote`,
    };
  }
  if (scan.spelled === 0) return { value, inexact: 0 };
  return { value: parseKeeping(text, scan.inexact), inexact: scan.spelled };
}

/**
 * The most numbers spelled otherwise than JavaScript writes them (`1.0`, `1e2`, `-0`, integers
 * beyond 2^53) an answer may carry. Each is kept as written (parseKeeping: a marker string of
 * about 30 characters in a second text, a JsonNumber in the tree), so 800 KB of `1.0,` made a
 * 6.3 MB text and a 60 MB answer took hundreds of megabytes; more than this many, the answer is
 * refused before any marker is made. Ethereum answers spell quantities as hex strings: the numbers
 * they carry (eth_feeHistory's gasUsedRatio, at most 1024 of them) are few.
 */
export const maxInexactNumbers = 10_000;

/** readJson's reason for an answer with more than maxInexactNumbers such numbers. */
export const tooManyInexact = `more than ${maxInexactNumbers} numbers written otherwise than JavaScript writes them (like 1.0 or 1e2): each would be kept as written, so the answer is not judged`;

/**
 * JSON.parse of the text with each inexact number token (start, end offsets) replaced by a
 * marker string, then each marker by a JsonNumber of the token. The marker carries a random
 * nonce drawn per call, so no string of the answer can pass for one.
 */
function parseKeeping(text: string, inexact: readonly number[]): unknown {
  const prefix = `\\u0000${randomBytes(12).toString('base64url')}:`; // as written in the JSON text
  const marker = JSON.parse(`"${prefix}"`) as string; // as JSON.parse gives it
  const tokens: string[] = [];
  let rewritten = '';
  let from = 0;
  for (let k = 0; k < inexact.length; k += 2) {
    const start = inexact[k]!;
    const end = inexact[k + 1]!;
    tokens.push(text.slice(start, end));
    rewritten += `${text.slice(from, start)}"${prefix}${tokens.length - 1}"`;
    from = end;
  }
  rewritten += text.slice(from);
  const revive = (v: unknown): unknown => {
    if (typeof v === 'string') return v.startsWith(marker) ? new JsonNumber(tokens[Number(v.slice(marker.length))]!) : v;
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = revive(v[i]);
    } else {
      for (const key of Object.keys(v)) (v as Record<string, unknown>)[key] = revive((v as Record<string, unknown>)[key]);
    }
    return v;
  };
  return revive(JSON.parse(rewritten));
}

/**
 * One pass over JSON text known to be valid: the members of all its objects (the `:` outside
 * strings) and the number tokens that do not read back as written (String(Number(t)) !== t:
 * 1.0, 1e2, -0, 1e400, integers beyond 2^53), as start and end offsets in one flat list (the
 * first `keepAtMost` of them; `spelled` counts them all). Strings are skipped with indexOf.
 */
export function scanText(text: string, keepAtMost = Infinity): { members: number; inexact: number[]; spelled: number } {
  const n = text.length;
  let members = 0;
  const inexact: number[] = [];
  let spelled = 0;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      let j = i;
      for (;;) {
        j = text.indexOf('"', j + 1);
        let k = j - 1;
        while (text.charCodeAt(k) === 92 /* \ */) k--;
        if ((j - 1 - k) % 2 === 0) break; // an even run of backslashes: this quote ends the string
      }
      i = j + 1;
    } else if (c === 58 /* : */) {
      members++;
      i++;
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      let j = i + 1;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (!((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45)) break;
      }
      const token = text.slice(i, j);
      if (String(Number(token)) !== token && ++spelled <= keepAtMost) inexact.push(i, j);
      i = j;
    } else i++;
  }
  return { members, inexact, spelled };
}

/** Two keys of one object that fold alike (set by countMembers; the first pair found). */
let foldClash: [string, string] | undefined;


/**
 * Each key seen → a number for its folded form (keys that fold alike share it). An answer's
 * objects repeat the same few keys thousands of times: one map lookup per key, and the check of
 * one object is a stamp per number (`seen[n] === round`), no set per object. Never cleared during
 * a walk (a clash could go unseen); after one, when an answer brought many keys (forgetKeys).
 */
const foldNumber = new Map<string, number>();
const foldNumberOfFolded = new Map<string, number>();
let seen = new Int32Array(64);
let round = 0;

/** After a walk: the keys are forgotten when there are more than honest answers bring. */
function forgetKeys(): void {
  if (foldNumber.size <= 4096) return;
  foldNumber.clear();
  foldNumberOfFolded.clear();
  seen = new Int32Array(64);
  round = 0;
}

function foldNumberOf(key: string): number {
  let n = foldNumber.get(key);
  if (n === undefined) {
    const f = foldKey(key);
    n = foldNumberOfFolded.get(f);
    if (n === undefined) {
      n = foldNumberOfFolded.size;
      foldNumberOfFolded.set(f, n);
      if (n >= seen.length) {
        const grown = new Int32Array(seen.length * 2);
        grown.set(seen);
        seen = grown;
      }
    }
    foldNumber.set(key, n);
  }
  return n;
}

/** Members of every object in a parsed JSON value; notes in foldClash two keys of one object that fold alike. */
function countMembers(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const v of value) if (v !== null && typeof v === 'object') count += countMembers(v);
    return count;
  }
  const keys = Object.keys(value);
  count = keys.length;
  if (count > 1 && foldClash === undefined) {
    if (++round === 0x7fffffff) {
      round = 1;
      seen.fill(0);
    }
    for (const k of keys) {
      const n = foldNumberOf(k);
      if (seen[n] === round) {
        foldClash = [keys.find((other) => other !== k && foldNumberOf(other) === n)!, k];
        break;
      }
      seen[n] = round;
    }
  }
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== null && typeof v === 'object') count += countMembers(v);
  }
  return count;
}

/**
 * The body to return under a confirmation: the first member's raw bytes, unless it carries a
 * field left out of the comparison (an ignored field, or one outside the execution-apis schema:
 * canonical.ts) whose value not every member carried alike (absent from one, or sent by all with
 * different values: not vouched for either way, so removed, never a disagreement). Then that
 * answer is read again (readJson), those fields are removed, and it is written out again:
 * compact, numbers as written, key order kept except that integer-like keys come first (as in
 * any JS object).
 */
export function confirmedBody(members: readonly { body: Buffer; ignored?: readonly IgnoredValue[] }[], payload: RpcPayload): Buffer {
  const body = agreedBody(members, payload);
  // An id the client wrote otherwise than JSON.stringify would (`1.0`, `1e2`): written back so,
  // whatever the upstream, the cache or a merged request's splice wrote.
  const idText = payload.batch ? undefined : payload.calls[0]?.idText;
  return idText === undefined ? body : (withReplyIdText(body, idText) ?? body);
}

function agreedBody(members: readonly { body: Buffer; ignored?: readonly IgnoredValue[] }[], payload: RpcPayload): Buffer {
  const first = members[0]!;
  if (!first.ignored) return first.body;
  const others = members.slice(1).map((m) => new Set((m.ignored ?? []).map((v) => v.key)));
  const drop = first.ignored.filter((v) => others.some((keys) => !keys.has(v.key)));
  if (drop.length === 0) return first.body;
  const read = readJson(first.body.toString('utf8'));
  if ('reason' in read) return first.body; // cannot happen: it was read the same way to vote
  for (const { path } of drop) removeAt(read.value, path, payload);
  // A JsonNumber goes out as a marker string, then the marker is replaced by the number's text.
  const nonce = randomBytes(12).toString('base64url');
  const numbers: string[] = [];
  const text = JSON.stringify(read.value, (_key, v: unknown) => (v instanceof JsonNumber ? `\u0000${nonce}:${numbers.push(v.text) - 1}` : v));
  const markers = new RegExp(`"\\\\u0000${nonce}:(\\d+)"`, 'g');
  return Buffer.from(numbers.length === 0 ? text : text.replace(markers, (_m, k: string) => numbers[Number(k)]!));
}

/** Deletes the field at `path` (from the result; in a batch, path[0] is the request position). */
function removeAt(body: unknown, path: readonly (string | number)[], payload: RpcPayload): void {
  let at: unknown;
  let rest = path;
  if (payload.batch) {
    const id = payload.calls[path[0] as number]!.id;
    at = (body as Record<string, unknown>[]).find((m) => m.id === id)?.result;
    rest = path.slice(1);
  } else {
    at = (body as Record<string, unknown>).result;
  }
  for (const step of rest.slice(0, -1)) at = (at as Record<string | number, unknown> | undefined)?.[step];
  if (at !== null && typeof at === 'object') delete (at as Record<string, unknown>)[rest[rest.length - 1] as string];
}



function idKey(id: unknown): string {
  return `${typeof id}:${String(id)}`;
}

/** The answer in a response object, or a string saying what is wrong with it. */
export function answerOf(value: unknown, call: RpcCall, scrub: (text: string) => string, asAnswer?: (message: string) => boolean): Answer | Refusal | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON-RPC response object';
  const obj = value as Record<string, unknown>;
  if (obj.id !== call.id) return `wrong id ${JSON.stringify(obj.id)} (expected ${JSON.stringify(call.id)})`;
  const odd = foldedMember(obj, responseMembers);
  if (odd !== undefined) return odd;
  if ('error' in obj && obj.error !== undefined && obj.error !== null) {
    // JSON-RPC 2.0: never both. Clients differ on which they read, and only the error would vote
    // (a `"result": null` beside it, as some servers write it, is read as the error, as before).
    if (obj.result !== undefined && obj.result !== null) return 'both a result and an error (JSON-RPC 2.0 allows one)';
    const error = obj.error as Record<string, unknown>;
    if (typeof error !== 'object' || typeof error.code !== 'number' || !Number.isInteger(error.code)) return 'error without an integer code';
    const oddInError = foldedMember(error, errorMembers);
    if (oddInError !== undefined) return `in its error: ${oddInError}`;
    const message = String(error.message ?? '');
    // The one table of provider trouble and refusals (trouble.ts); anything else is the node's answer.
    const verdict = errorKind(error.code, message);
    if (verdict?.kind === 'refusal') {
      return new Refusal(`${verdict.label}: ${error.code}: ${scrub(message).slice(0, 200)}`, { error: { code: error.code, data: error.data, message: error.message } });
    }
    if (verdict?.kind === 'trouble' && !asAnswer?.(message)) return `${verdict.label} ${error.code}: ${scrub(message).slice(0, 200)}`;
    return { error: { code: error.code, data: error.data, message: error.message } };
  }
  if (!('result' in obj)) return 'neither result nor error';
  return { result: obj.result };
}

/** The members a response is read by, and those of its error object. */
const responseMembers: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'result', 'error']);
const errorMembers: ReadonlySet<string> = new Set(['code', 'message', 'data']);

/**
 * Why the object cannot vote when it has a key that is not one of `members` as written but folds
 * to one (`ERROR`, `Result`, `DATA`): Go's encoding/json and .NET's Newtonsoft match keys
 * case-insensitively, so their clients read it as that member (an error beside the agreed
 * result, revert data beside the agreed error) while this comparison never saw it. The same
 * trap as two keys of one object that fold alike (readJson), with the exact spelling absent.
 */
function foldedMember(obj: Record<string, unknown>, members: ReadonlySet<string>): string | undefined {
  for (const key of Object.keys(obj)) {
    if (members.has(key)) continue;
    const folded = foldKey(key);
    if (members.has(folded)) {
      return `the key ${JSON.stringify(key)}, which case-insensitive parsers (Go's, .NET's) read as ${JSON.stringify(folded)}: never compared, so the answer cannot vote`;
    }
  }
  return undefined;
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
