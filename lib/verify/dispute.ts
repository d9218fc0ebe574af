/**
 * Where competing answers differ (the `differences` of a dispute). Pure.
 *
 * The answers are compared in their comparable form (answers/canonical.ts: `{result}` or
 * `{error:{code,data,message?}}`, keys sorted, hex lower-cased, numbers as written; in blocks,
 * transactions, receipts and logs only the execution-apis schema's fields, less the ignored ones
 * and nulls), so a difference found here is one that made the hashes differ, never a field the
 * comparison leaves out (an ignored one, or a client's extra outside the schema).
 *
 * One walk over all the groups' values at once, in document order (object keys sorted, array
 * elements by index), that stops at the `limit`-th difference: the paths come out in the same
 * order whatever the arrival order, and a 2.5 MB log list costs one pass at most.
 *
 * A path reads as in JavaScript: `result[3].data`, `result.transactions[0].hash`,
 * `error.code`, a key that is not an identifier as `["a key"]`. In a batch each member is
 * named by its id: `[id=7].result.logsBloom`. Where arrays differ in length, `….length` comes
 * first with each length, then the elements that differ (an element one answer lacks is absent).
 * A value is the canonical JSON text of that part of the answer, cut to `width` characters
 * (`…` marks a cut); `absent: true` where an answer has nothing at that path.
 */
import type { RpcPayload } from '../jsonrpc/types.js';
import { readJson } from './answers/answers.js';
import { comparable, JsonNumber, type Answer } from './answers/canonical.js';
import { type IgnoredFields } from './answers/compared-fields.js';

/** One group's value at a path: its canonical JSON text (cut), or absent. */
export interface DisputedValue {
  /** The index of the group (the order the groups are given in: `data.groups` of the error). */
  group: number;
  value?: string;
  absent?: true;
}

export interface Difference {
  path: string;
  /** One per group, in group order. */
  values: DisputedValue[];
}

export interface DiffOptions {
  /** At most this many differences (default 5). */
  limit?: number;
  /** Values are cut to this many characters (default 80). */
  width?: number;
  /** Applied to every value and path before it is cut (provider keys: upstream.secrets.scrub). */
  scrub?: (text: string) => string;
  /** The ids of a batch's calls, in request order: the roots are then arrays of members. */
  batchIds?: readonly unknown[];
}

export const defaultDiffLimit = 5;
export const defaultValueWidth = 80;

/** The comparable value of each call's answer in an upstream's body, as the vote was made; undefined where unreadable. */
export function comparableAnswers(body: Buffer | string, payload: RpcPayload, ignored?: IgnoredFields): unknown {
  const read = readJson(typeof body === 'string' ? body : body.toString('utf8'));
  if ('reason' in read) return undefined;
  const of = (member: unknown, method: string): unknown => {
    if (member === null || typeof member !== 'object' || Array.isArray(member)) return undefined;
    const obj = member as Record<string, unknown>;
    const answer: Answer = obj.error !== undefined && obj.error !== null ? { error: obj.error as { code: unknown } } : { result: obj.result };
    return comparable(method, answer, ignored ? { ignored } : {});
  };
  if (!payload.batch) return of(read.value, payload.calls[0]!.method);
  if (!Array.isArray(read.value)) return undefined;
  const byId = new Map<string, unknown>();
  for (const m of read.value) if (m !== null && typeof m === 'object') byId.set(idKey((m as { id?: unknown }).id), m);
  return payload.calls.map((c) => of(byId.get(idKey(c.id)), c.method));
}

function idKey(id: unknown): string {
  return `${typeof id}:${String(id)}`;
}

/** The differences between the groups' values (one comparable value per group), first `limit` in document order. */
export function diffAnswers(values: readonly unknown[], options: DiffOptions = {}): Difference[] {
  const limit = options.limit ?? defaultDiffLimit;
  const width = options.width ?? defaultValueWidth;
  const scrub = options.scrub ?? ((text: string) => text);
  const out: Difference[] = [];
  if (values.length < 2 || limit <= 0) return out;
  const report = (path: string, vals: readonly unknown[]) => {
    out.push({
      path: cut(scrub(path), 4 * width),
      values: vals.map((v, group) => (v === undefined ? { group, absent: true as const } : { group, value: cut(scrub(preview(v, width + 4096)), width) })),
    });
  };
  const walk = (vals: readonly unknown[], path: string): void => {
    if (out.length >= limit) return;
    let objects = 0;
    let arrays = 0;
    for (const v of vals) {
      if (Array.isArray(v)) arrays++;
      else if (isObject(v)) objects++;
    }
    if (objects === vals.length) {
      const first = vals[0] as Record<string, unknown>;
      const keys = sameKeys(vals) ?? [...new Set(vals.flatMap((v) => Object.keys(v as object)))].sort();
      for (const k of keys) {
        // The common case first: the same primitive in every answer, nothing to walk into.
        const v0 = first[k];
        if ((v0 === null || typeof v0 !== 'object') && vals.every((v) => (v as Record<string, unknown>)[k] === v0)) continue;
        walk(vals.map((v) => (Object.hasOwn(v as object, k) ? (v as Record<string, unknown>)[k] : undefined)), path + segment(k, path === ''));
        if (out.length >= limit) return;
      }
      return;
    }
    if (arrays === vals.length) {
      const lengths = vals.map((v) => (v as unknown[]).length);
      const max = Math.max(...lengths);
      if (lengths.some((n) => n !== max)) report(`${path}.length`, lengths);
      for (let i = 0; i < max && out.length < limit; i++) walk(vals.map((v) => (v as unknown[])[i]), `${path}[${i}]`);
      return;
    }
    if (!allEqual(vals)) report(path, vals);
  };
  const ids = options.batchIds;
  if (ids) {
    for (let i = 0; i < ids.length && out.length < limit; i++) {
      walk(values.map((v) => (Array.isArray(v) ? v[i] : undefined)), `[id=${JSON.stringify(ids[i] ?? null)}]`);
    }
  } else {
    walk(values, '');
  }
  return out;
}

/** The keys of the first object, sorted, when every object has exactly these keys (canonical values are sorted already). */
function sameKeys(vals: readonly unknown[]): string[] | undefined {
  const keys = Object.keys(vals[0] as object);
  for (let i = 1; i < keys.length; i++) if (keys[i - 1]! >= keys[i]!) return undefined;
  for (let j = 1; j < vals.length; j++) {
    const other = Object.keys(vals[j] as object);
    if (other.length !== keys.length) return undefined;
    for (let i = 0; i < keys.length; i++) if (other[i] !== keys[i]) return undefined;
  }
  return keys;
}

function isObject(v: unknown): v is object {
  return v !== null && typeof v === 'object' && !(v instanceof JsonNumber);
}

/** Leaves (or a mix of kinds): equal when all are the same primitive, or JsonNumbers of the same text. */
function allEqual(vals: readonly unknown[]): boolean {
  const first = vals[0];
  for (let i = 1; i < vals.length; i++) {
    const v = vals[i];
    if (v === first) continue;
    if (v instanceof JsonNumber && first instanceof JsonNumber && v.text === first.text) continue;
    return false;
  }
  return true;
}

const identifier = /^[A-Za-z_$][\w$]*$/;

function segment(key: string, root: boolean): string {
  if (!identifier.test(key)) return `[${JSON.stringify(key)}]`;
  return root ? key : `.${key}`;
}

function cut(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width)}…` : text;
}

/**
 * Canonical JSON text of a value (answers/canonical.ts canonicalJson), written only up to about `max`
 * characters: a value that is a whole 2.5 MB log list is not written out to show 80 of it.
 */
export function preview(value: unknown, max: number): string {
  let out = '';
  const write = (v: unknown): void => {
    if (out.length > max) return;
    if (v === undefined) {
      out += 'null';
    } else if (v === null || typeof v !== 'object') {
      out += typeof v === 'number' && !Number.isFinite(v) ? 'null' : JSON.stringify(v) ?? 'null';
    } else if (v instanceof JsonNumber) {
      out += v.text;
    } else if (Array.isArray(v)) {
      out += '[';
      for (let i = 0; i < v.length && out.length <= max; i++) {
        if (i > 0) out += ',';
        write(v[i]);
      }
      out += ']';
    } else {
      out += '{';
      let first = true;
      for (const k of Object.keys(v).sort()) {
        if (out.length > max) break;
        const member = (v as Record<string, unknown>)[k];
        if (member === undefined) continue;
        if (!first) out += ',';
        first = false;
        out += `${JSON.stringify(k)}:`;
        write(member);
      }
      out += '}';
    }
  };
  write(value);
  return out;
}
