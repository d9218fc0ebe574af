/**
 * The canonical form two answers are compared in (lib/verify/README.md "How agreement works"). Pure and total.
 *
 * - A result is compared as `{"result":R}`, an error as `{"error":{"code":C,"data":D}}`, plus
 *   its `message` as written for the codes whose meaning is in the message (`messageCodes`).
 * - Keys are sorted recursively and there is no whitespace (the form json-stable-stringify gives).
 * - Numbers are compared as written: a number whose text JSON.parse would change (`1.0`, `1e2`,
 *   `-0`, integers beyond 2^53, `1e400`) reaches this module as a JsonNumber holding its text
 *   (answers.ts), and is written as that text.
 * - Hex strings (`0x…`) are lower-cased: an address in checksum case and the same address in
 *   lower case are the same value.
 * - In blocks, transactions, receipts and logs the fields the execution-apis schema defines for
 *   them (`schemaFields`, compared-fields.ts) count, except the ignored ones (`defaultIgnoredFields` plus config); a
 *   field whose value is null counts as absent. Every other field (an ignored one, or one outside
 *   the schema: a client's or an L2's extra such as `l1BlockNumber`) is left out and collected
 *   (path and value), so that the answer returned under a confirmation keeps only those that all
 *   N agreeing answers carried identically (answers.ts confirmedBody).
 *
 * X-Json-Hash is the SHA-256 hex of this form, so it does not depend on which upstream's bytes
 * are returned or on the request id.
 */
import { hash } from 'node:crypto';
import { methods, methodsWhere, type ResultShape } from '../../jsonrpc/methods.js';
import { comparedUnder, defaultIgnoredFields, type Compared, type IgnoredFields, type Shape } from './compared-fields.js';

/**
 * JSON-RPC error codes compared with their message: geth, erigon and reth answer many unrelated
 * errors with the generic -32000 ("execution reverted", "nonce too low", "insufficient funds…"),
 * so the code alone says little; so does -32603, the generic internal error that geth's
 * eth_simulateV1 gives for many distinct faults of the call ("err: nonce has max value…"). Other codes mean one thing each (3: a revert, whose `data` is
 * compared; -32602: invalid params) and their message is free text that differs between clients.
 */
export const messageCodes: ReadonlySet<number> = new Set([-32000, -32603]);

/** A JSON number kept as written: JSON.parse would change its text (see answers.ts). */
export class JsonNumber {
  constructor(readonly text: string) {}
}

/** A field left out of the comparison (ignored, or outside the schema) that an answer carried: where (path from the response) and its canonical value. */
export interface IgnoredValue {
  /** From the result (or, in a batch, from the member's position in request order). */
  path: readonly (string | number)[];
  /** The path and the value's canonical text, what two answers' copies are compared on. */
  key: string;
}

export interface ShapeNode {
  shape: Shape;
  /** Fields holding objects (or arrays of objects) of another shape. */
  children?: Readonly<Record<string, ShapeNode>>;
}
const logNode: ShapeNode = { shape: 'log' };
const transactionNode: ShapeNode = { shape: 'transaction' };
const receiptNode: ShapeNode = { shape: 'receipt', children: { logs: logNode } };
const blockNode: ShapeNode = { shape: 'block', children: { transactions: transactionNode } };

const nodeOf: Readonly<Record<ResultShape, ShapeNode>> = { block: blockNode, transaction: transactionNode, receipt: receiptNode, log: logNode };

/** The shape of each method's result (or of each element when it is a list): the method table's `result`, derived once. */
export const resultShape: ReadonlyMap<string, ShapeNode> = new Map(methodsWhere((e) => e.result !== undefined).map((m) => [m, nodeOf[methods[m]!.result!]]));

const hexString = /^0x[0-9a-fA-F]*$/;

/**
 * Set while comparable() builds its value when the native JSON.stringify fast path of
 * canonicalForm() would not write it canonically: an object has an array-index key ("0", "7"),
 * which V8 enumerates numerically whatever the insertion order, or a JsonNumber is in it.
 */
let needsWriter = false;
const arrayIndex = /^(?:0|[1-9]\d{0,9})$/;

/**
 * The state of one comparable() walk: the fields compared, where to put those left out, and the
 * path from the result to the object being walked (pushed and popped: a path array is built only
 * for a field left out, not for each of 5,000 logs).
 */
let compared: Compared = comparedUnder(defaultIgnoredFields);
let found: IgnoredValue[] | undefined;
const trail: (string | number)[] = [];

/** The object's keys in canonical (sorted) order; notes array-index keys. */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value).sort();
  if (!needsWriter) {
    for (const k of keys) {
      const c = k.charCodeAt(0);
      if (c >= 48 && c <= 57 && arrayIndex.test(k)) {
        needsWriter = true;
        break;
      }
    }
  }
  return keys;
}

/**
 * Lower-cases hex strings, everywhere in the value. Objects are rebuilt with their keys inserted
 * in sorted order. They are ordinary objects (a null-prototype object starts in V8's slow
 * dictionary mode, which JSON.stringify then walks slowly); an answer's own "__proto__" key is
 * defined as a data property, so it stays data and never sets the prototype.
 */
function plain(value: unknown): unknown {
  if (typeof value === 'string') return lowerHex(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    if (value instanceof JsonNumber) {
      needsWriter = true;
      return value;
    }
    const out: Record<string, unknown> = {};
    for (const k of sortedKeys(value)) put(out, k, plain((value as Record<string, unknown>)[k]));
    return out;
  }
  return value;
}

/** out[key] = v, as an own data property even for "__proto__". */
function put(out: Record<string, unknown>, key: string, v: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  else out[key] = v;
}

/**
 * A hex string in lower case (answers differ only in the case of checksummed addresses); any
 * other string as it is. Most hex in an answer is lower case already: then toLowerCase gives the
 * same string back and the hex test is skipped.
 */
function lowerHex(value: string): string {
  if (value.charCodeAt(0) !== 48 || value.charCodeAt(1) !== 120) return value; // not "0x…"
  const lower = value.toLowerCase();
  return lower === value || hexString.test(value) ? lower : value;
}

/**
 * A block, transaction, receipt or log (or a list of them): its schema fields but the ignored
 * ones and nulls, sorted; any other field with a value is noted in `found` with its path. One
 * Set lookup per key. The fields kept are schema names, never an array index or "__proto__".
 */
function shaped(value: unknown, node: ShapeNode): unknown {
  if (Array.isArray(value)) {
    return value.map((v, i) => {
      trail.push(i);
      const out = shaped(v, node);
      trail.pop();
      return out;
    });
  }
  if (value === null || typeof value !== 'object' || value instanceof JsonNumber) return plain(value);
  const fields = compared[node.shape];
  const children = node.children;
  const out: Record<string, unknown> = {};
  const foundBefore = found?.length ?? 0;
  let kept = 0;
  let left = 0;
  for (const k of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[k];
    if (v === null) continue;
    if (!fields.has(k)) {
      left++;
      if (found) {
        const at = [...trail, k];
        found.push({ path: at, key: `${JSON.stringify(at)}=${canonicalJson(plain(v))}` });
      }
      continue;
    }
    kept++;
    if (children !== undefined && Object.hasOwn(children, k)) {
      trail.push(k);
      out[k] = shaped(v, children[k]!);
      trail.pop();
    } else {
      out[k] = plain(v);
    }
  }
  // Not a block, transaction, receipt or log at all (no compared field, only others): compared
  // whole, so that two different such objects never agree on an empty one.
  if (kept === 0 && left > 0) {
    if (found) found.length = foundBefore;
    return plain(value);
  }
  return out;
}

/** What an upstream said about one call: a result or a JSON-RPC error. */
export type Answer = { result: unknown } | { error: { code: unknown; data?: unknown; message?: unknown } };

export interface CanonicalOptions {
  /** Schema fields not compared (default: defaultIgnoredFields). */
  ignored?: IgnoredFields;
  /** Receives the fields left out that the answer carries (not null: ignored or outside the schema), with their paths. */
  found?: IgnoredValue[];
  /** Prepended to the paths in `found` (a batch member's position). */
  path?: readonly (string | number)[];
}

/** The comparable value of one answer: `{result}` (blocks, transactions, receipts and logs reduced to their compared fields), or `{error:{code,data,message?}}`. */
export function comparable(method: string, answer: Answer, options: CanonicalOptions = {}): unknown {
  if ('error' in answer) {
    const { code, data, message } = answer.error;
    // keys inserted in sorted order: code, data, message
    const error: Record<string, unknown> = { code };
    if (data !== undefined && data !== null) error.data = plain(data);
    if (typeof code === 'number' && messageCodes.has(code) && message !== undefined) {
      error.message = typeof message === 'string' ? message : plain(message); // a string exactly as written
    }
    return { error };
  }
  const node = resultShape.get(method);
  if (!node) return { result: plain(answer.result) };
  compared = comparedUnder(options.ignored ?? defaultIgnoredFields);
  found = options.found;
  if (found && options.path) trail.push(...options.path);
  try {
    return { result: shaped(answer.result, node) };
  } finally {
    compared = comparedUnder(defaultIgnoredFields);
    found = undefined;
    trail.length = 0;
  }
}

/**
 * The canonical text of one answer: exactly canonicalJson(comparable(method, answer)), faster.
 * A list of plain logs or transactions (or one such object) is written by one JSON.stringify
 * (flatText). Otherwise comparable() inserts keys in sorted order, so V8's own JSON.stringify
 * already writes them sorted; only when an object has array-index keys (enumerated numerically)
 * or the answer has numbers kept as written does it fall back.
 */
export function canonicalForm(method: string, answer: Answer, options?: CanonicalOptions): string {
  if (!('error' in answer)) {
    const node = resultShape.get(method);
    const text = node === undefined ? undefined : flatText(answer.result, node, options?.ignored);
    if (text !== undefined) return `{"result":${text}}`;
  }
  needsWriter = false;
  const value = comparable(method, answer, options);
  return needsWriter ? canonicalJson(value) : JSON.stringify(value);
}

/**
 * The canonical text of elements `from`, `from + 1`… of a single call's result that is an array:
 * exactly what canonicalForm(method, { result }, options) writes for them between `{"result":[`
 * and `]}`, commas between them (the same walk, the same paths from the result in `found`), so
 * that a long list can be written, and hashed, a run of elements at a time (sliced.ts
 * judgeBody). Not for a batch (no `path`).
 */
export function resultElementsForm(method: string, elements: readonly unknown[], from: number, options: Omit<CanonicalOptions, 'path'> = {}): string {
  needsWriter = false;
  const node = resultShape.get(method);
  let value: unknown[];
  if (!node) {
    value = elements.map(plain);
  } else {
    const text = elements.length > 0 ? flatText(elements, node, options.ignored) : undefined;
    if (text !== undefined) return text.slice(1, -1);
    compared = comparedUnder(options.ignored ?? defaultIgnoredFields);
    found = options.found;
    try {
      value = elements.map((v, i) => {
        trail.push(from + i);
        const out = shaped(v, node);
        trail.pop();
        return out;
      });
    } finally {
      compared = comparedUnder(defaultIgnoredFields);
      found = undefined;
      trail.length = 0;
    }
  }
  return (needsWriter ? canonicalJson(value) : JSON.stringify(value)).slice(1, -1);
}

/**
 * The compared fields of a shape under one list of ignored fields, sorted (canonical order);
 * `flat` when none of them holds objects of another shape (logs, transactions).
 */
interface FieldList {
  keys: string[];
  flat: boolean;
}
const fieldLists = new WeakMap<Compared, Map<ShapeNode, FieldList>>();

function fieldListOf(node: ShapeNode, under: Compared): FieldList {
  let byNode = fieldLists.get(under);
  if (!byNode) {
    byNode = new Map();
    fieldLists.set(under, byNode);
  }
  let list = byNode.get(node);
  if (!list) {
    list = { keys: [...under[node.shape]].sort(), flat: node.children === undefined };
    byNode.set(node, list);
  }
  return list;
}

/**
 * canonicalJson(shaped(result, node)) written by one JSON.stringify(result, sorted fields) when
 * the result is a list of objects of a shape with no nested shape (logs, transactions), or one
 * such object, that allFlat accepts; undefined otherwise (then shaped() does it, field by field).
 */
function flatText(result: unknown, node: ShapeNode, ignored: IgnoredFields | undefined): string | undefined {
  const list = fieldListOf(node, comparedUnder(ignored ?? defaultIgnoredFields));
  if (!list.flat || result === null || typeof result !== 'object') return undefined;
  const elements = Array.isArray(result) ? result : [result];
  return allFlat(elements, list) ? JSON.stringify(result, list.keys) : undefined;
}

/**
 * Whether every element is an object that JSON.stringify(element, list.keys) writes exactly as
 * shaped() and canonicalJson would: the list (the compared fields, sorted) gives JSON.stringify
 * its order and the only keys it writes, so that one native call writes a whole list of logs in
 * canonical form. That holds when each object's keys are compared fields only (nothing to leave
 * out, nothing to note in `found`), each its own property (JSON.stringify would read an
 * inherited one), none null (left out by shaped(), written by JSON.stringify), and each value is
 * written the same by both: a number, a boolean, a string that is not hex with an upper-case
 * digit (to be lower-cased), or a list of such (or nulls; an object in it would have its keys
 * filtered by the list). A list with anything else (an extra, a JsonNumber, a nested object)
 * is written through shaped().
 */
function allFlat(elements: readonly unknown[], list: FieldList): boolean {
  const keys = list.keys;
  for (let e = 0; e < elements.length; e++) {
    const object = elements[e];
    if (object === null || typeof object !== 'object' || Array.isArray(object) || object instanceof JsonNumber) return false;
    let present = 0;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const v = (object as Record<string, unknown>)[k];
      if (v === undefined) continue;
      if (!Object.hasOwn(object, k) || !flatValue(v)) return false;
      present++;
    }
    if (present !== Object.keys(object).length) return false;
  }
  return true;
}

/** A field's value that JSON.stringify writes as canonicalJson(plain(value)) does (allFlat). */
function flatValue(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
      // lowerHex leaves it as it is: not "0x…", or no upper-case letter (toLowerCase gives the
      // string itself back then, without a copy), or not hex.
      return v.charCodeAt(0) !== 48 || v.charCodeAt(1) !== 120 || v.toLowerCase() === v || !hexString.test(v);
    case 'number':
    case 'boolean':
      return true;
    case 'object': {
      if (!Array.isArray(v)) return false;
      for (let i = 0; i < v.length; i++) {
        const x = v[i] as unknown;
        if (x !== null && (typeof x === 'object' || !flatValue(x))) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * Canonical JSON text of a value: keys sorted (by UTF-16 code units, as Array#sort does), no
 * whitespace, `undefined` members left out (in arrays: null), a JsonNumber as its text. For JSON
 * data it gives exactly what json-stable-stringify gives (the unit tests check that on generated
 * values), faster (test/bench/README.md): it is the hot path of every answer, large log lists included.
 */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (value instanceof JsonNumber) return value.text;
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          out += write(value[i]) ?? 'null';
        }
        return `${out}]`;
      }
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return write((value as { toJSON(): unknown }).toJSON());
      const keys = Object.keys(value).sort();
      let out = '{';
      for (const key of keys) {
        const member = write((value as Record<string, unknown>)[key]);
        if (member === undefined) continue;
        if (out.length > 1) out += ',';
        out += `${JSON.stringify(key)}:${member}`;
      }
      return `${out}}`;
    }
    case 'bigint':
      throw new TypeError('canonicalJson: a bigint is not JSON');
    default:
      return undefined;
  }
}

/** SHA-256 hex of a string's UTF-8 bytes (one-shot crypto.hash: a third of createHash's cost on short texts). */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}
