/**
 * Body bytes → validated JSON-RPC payload. Pure: no I/O. Every rejection is a GatewayError that
 * carries the client's id when the id itself was readable, so the error answer can echo it.
 */
import { isUtf8 } from 'node:buffer';
import { InvalidRequestError, ParseError, BatchTooLargeError } from '../errors.js';
import { arrayElements, elementsOver, scanJson, type IdSpan } from './scan.js';
import type { BatchMember, RpcCall, RpcId, RpcPayload } from './types.js';

export interface ParseOptions {
  /** Largest batch accepted; a larger one is rejected before any upstream is called. */
  maxBatchSize: number;
  /** Deepest nesting of arrays and objects accepted (checked before parsing). Default 256. */
  maxDepth?: number;
}

/** Returns the id to echo for a single request object, or null when it is not a valid id. */
export function readableId(value: unknown): RpcId | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = (value as Record<string, unknown>).id;
  return isValidId(id) ? id : null;
}

/** The id a single request's `id` member holds, from its JSON text (null when not a valid id). */
function idOfText(text: string | undefined): RpcId | null {
  if (text === undefined) return null;
  try {
    const id = JSON.parse(text) as unknown;
    return isValidId(id) ? id : null;
  } catch {
    return null;
  }
}

function isValidId(id: unknown): id is RpcId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
}

/** Parses the raw body; the first byte decides between a single request and a batch. */
export function parsePayload(body: Buffer, options: ParseOptions): RpcPayload {
  // A UTF-8 byte-order mark is dropped from the bytes forwarded too: Go nodes reject it.
  const raw = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? body.subarray(3) : body;
  // First, before any pass over the whole body: JSON.parse (and the depth scan below) of a body
  // of many small calls costs in proportion to them, and every other client waits meanwhile.
  if (elementsOver(raw, options.maxBatchSize)) {
    throw new BatchTooLargeError(`Batch too large: more than ${options.maxBatchSize} calls, the limit is ${options.maxBatchSize} (limits.batchSize)`);
  }
  // JSON text is UTF-8 (RFC 8259). Other bytes would be read here as U+FFFD, the client's id
  // would not come back as sent, and the nodes the bytes are forwarded to may each read them
  // otherwise (Go replaces them, serde refuses them).
  if (!isUtf8(raw)) throw new ParseError('Parse error: the body is not UTF-8 (JSON text must be)');
  const text = raw.toString('utf8');
  if (text.trim() === '') throw new ParseError('Parse error: the request body is empty');
  // Before JSON.parse: it takes seconds on a few MB of `[[[[…]]]]`, and code after it recurses.
  const maxDepth = options.maxDepth ?? 256;
  // Each level of nesting takes an opening byte: a body no longer than maxDepth cannot nest
  // deeper, and the usual call (well under 256 bytes) is not scanned for it.
  const scan = raw.length > maxDepth ? scanJson(raw, { ids: true }) : undefined;
  if (scan !== undefined && scan.depth > maxDepth) {
    if (scan.truncated) throw new ParseError('Parse error: the body is not valid JSON (it ends inside a string, array or object)');
    // The id as written (`1.0` echoed so, as for any call), read from its text alone: the last
    // `id` member, as JSON.parse would keep it, when that text is a valid id.
    const idText = scan.kind === 'object' ? writtenId(scan.ids) : undefined;
    const id = idOfText(idText);
    throw new InvalidRequestError(`Invalid request: the body nests arrays and objects deeper than ${maxDepth} levels (limits.jsonDepth)`, {
      id, idText: id === null ? undefined : idText,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ParseError(`Parse error: the body is not valid JSON (${(err as Error).message})`);
  }
  if (Array.isArray(value)) {
    if (value.length === 0) throw new InvalidRequestError('Invalid request: empty batch');
    if (value.length > options.maxBatchSize) {
      throw new BatchTooLargeError(
        `Batch too large: ${value.length} calls, the limit is ${options.maxBatchSize} (limits.batchSize)`,
      );
    }
    // Each member on its own: a member refused here gets its own error with its own
    // id, a notification gets no answer, the others are forwarded with the bytes the client wrote.
    const spans = arrayElements(raw);
    const members: BatchMember[] = value.map((member: unknown, index): BatchMember => {
      const bytes = raw.subarray(spans[2 * index], spans[2 * index + 1]);
      if (isNotification(member)) {
        try {
          const { method } = toCall({ ...member, id: 0 }, `batch[${index}]`, undefined);
          return { kind: 'notification', method };
        } catch (error) {
          return { kind: 'invalid', error: error as Error, raw: bytes };
        }
      }
      try {
        const idText = bytes[0] === 0x7b ? writtenId(scanJson(bytes, { ids: true }).ids) : undefined;
        return { kind: 'call', call: toCall(member, `batch[${index}]`, idText), raw: bytes };
      } catch (error) {
        return { kind: 'invalid', error: error as Error, raw: bytes };
      }
    });
    const calls = members.flatMap((m) => (m.kind === 'call' ? [m.call] : []));
    return { calls, batch: true, raw, members };
  }
  // (the id's text as written: echoed so; the usual call, under maxDepth bytes, is scanned here)
  const call = toCall(value, 'request', writtenId((scan ?? scanJson(raw, { ids: true })).ids));
  return { calls: [call], batch: false, raw };
}

/** A batch member that is an object without an `id` member: a notification, if otherwise valid. */
function isNotification(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !('id' in value);
}

/**
 * A key of `obj` that a Go node (go-ethereum, erigon: encoding/json) reads as one of `names`
 * while it is not spelled so: Go matches keys case-insensitively (and folds `K` U+212A to `k`,
 * `ſ` U+017F to `s`), the last matching key winning. omnigate reads the exact keys and forwards
 * the client's bytes, so such a key would make the nodes answer another call than the one
 * classified (e.g. `"Params"` with `latest` after `"params"` with a block number).
 */
export function goAliasOf(obj: Record<string, unknown>, names: readonly string[]): string | undefined {
  // (for…in, not Object.keys: no array per call; a parsed JSON object has no inherited enumerable key)
  for (const key in obj) {
    if (!Object.hasOwn(obj, key)) continue;
    if (names.includes(key)) continue;
    const folded = foldKey(key);
    if (names.some((n) => n.toLowerCase() === folded)) return key;
  }
  return undefined;
}

/**
 * Two keys of one object anywhere in `value` that Go's encoding/json (and .NET's ignore-case
 * reading) take for one key, `"to"` and `"To"`, or an address in two letter cases as keys of a
 * state override: such a node reads the last of them, so the order the client wrote them in
 * decides the question, while omnigate's reading (JSON.parse, keys compared and sorted exactly)
 * sees one question in either order. The first such pair found, or undefined.
 */
export function foldedKeysIn(value: unknown): [string, string] | undefined {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const item of v) if (item !== null && typeof item === 'object') stack.push(item);
      continue;
    }
    const keys = Object.keys(v);
    if (keys.length > 1) {
      const folded = new Map<string, string>();
      for (const key of keys) {
        const f = foldKey(key);
        const other = folded.get(f);
        if (other !== undefined) return [other, key];
        folded.set(f, key);
      }
    }
    for (const key of keys) {
      const item = (v as Record<string, unknown>)[key];
      if (item !== null && typeof item === 'object') stack.push(item);
    }
  }
  return undefined;
}

/**
 * A JSON key as case-insensitive parsers match it: Go's encoding/json (Unicode simple folding:
 * `ſ` U+017F is `s`, the Kelvin sign U+212A is `k`) and .NET's ordinal ignore-case. Upper then
 * lower case covers both (and folds a little more, which only makes odd keys match).
 */
export function foldKey(key: string): string {
  const lower = key.toLowerCase();
  for (let i = 0; i < lower.length; i++) if (lower.charCodeAt(i) > 0x7f) return key.toUpperCase().toLowerCase();
  return lower;
}

const envelopeKeys = ['jsonrpc', 'id', 'method', 'params'] as const;

/** The JSON text of an object's `id` as written (the last, as JSON.parse reads a repeated key); undefined for an object or array. */
function writtenId(ids: readonly IdSpan[]): string | undefined {
  return ids[ids.length - 1]?.text;
}

/**
 * `value` as a call. `idText`: its id's JSON text as written (undefined when unknown), kept on
 * the call when JSON.stringify would write the id otherwise (`1.0`, `1e2`, `-0`), and quoted in
 * the refusal of an id that cannot be echoed.
 */
function toCall(value: unknown, where: string, idText: string | undefined): RpcCall {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidRequestError(`Invalid request: ${where} must be a JSON object, got ${describe(value)}`);
  }
  const obj = value as Record<string, unknown>;
  const id = readableId(obj);
  const fail = (reason: string) => new InvalidRequestError(`Invalid request: ${where} ${reason}`, { id });
  if (!('id' in obj)) throw fail('has no id (notifications are not supported: every call needs an answer)');
  if (!isValidId(obj.id)) throw fail(invalidId(obj.id, idText));
  if (obj.jsonrpc !== '2.0') throw fail(`must have "jsonrpc": "2.0", got ${describe(obj.jsonrpc)}`);
  if (typeof obj.method !== 'string' || obj.method === '') {
    throw fail(`must have a non-empty string "method", got ${describe(obj.method)}`);
  }
  if (obj.params !== undefined && !Array.isArray(obj.params)) {
    throw fail(`"params" must be an array (by-position), got ${describe(obj.params)}`);
  }
  const call = { id: obj.id, method: obj.method, params: (obj.params as unknown[] | undefined) ?? [] };
  const alias = goAliasOf(obj, envelopeKeys);
  const written = idText !== undefined && idText !== JSON.stringify(obj.id) ? idText : undefined;
  // (the usual call: one shape; an alias or an id written otherwise, rare, get their fields)
  if (alias === undefined && written === undefined) return call;
  return { ...call, ...(alias !== undefined && { alias }), ...(written !== undefined && { idText: written }) };
}

/**
 * Why an id is refused, quoting it as written (`text`) where JSON.parse would misquote it
 * (`1e400` reads as Infinity, `12345678901234567890` as 12345678901234567000).
 */
function invalidId(id: unknown, text: string | undefined): string {
  const shown = text === undefined ? '' : text.length > 40 ? `${text.slice(0, 40)}…` : text;
  const need = 'an id is a string or an integer within ±(2^53 - 1)';
  if (typeof id === 'number') {
    if (!Number.isFinite(id)) return `has an id ${shown} out of the range of JSON numbers as parsers read them (${id}): ${need}`;
    if (Number.isInteger(id)) return `has an id ${shown} that JSON parsers round (to ${JSON.stringify(id)}): ${need}; send a larger one as a string`;
    return `has an id ${shown} with a fraction: ${need}`;
  }
  if (id === null) return `has the id null, which cannot tell its answer from another's: ${need}`;
  return `has an id that is ${describe(id)}: ${need}`;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`;
}
