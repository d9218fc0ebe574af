/**
 * A structural scan of JSON bytes, without parsing them: the nesting depth, and where the `id`
 * members of a JSON-RPC answer (an object, or an array of objects) are. Linear, allocation-free
 * apart from the ids found, and strings are skipped with Buffer#indexOf (native), so a large
 * answer made mostly of hex strings costs little.
 *
 * Used to refuse pathologically nested JSON before JSON.parse (which takes seconds on a few MB of
 * `[[[[…]]]]`, and whose value would overflow the stack of any recursive code after it), and by
 * the WebSocket transport to put the client's ids back into an answer's raw bytes: the rest of
 * the bytes, numbers included, stay exactly as the upstream sent them. The same scan can be run
 * a slice at a time (`scanUpTo`), for an answer of tens of megabytes read in the event loop.
 *
 * It does not validate: a body it accepts may still be invalid JSON (JSON.parse says so later).
 */

/** Where one `id` member's value is in the bytes. */
export interface IdSpan {
  /** Which answer object: 0 for a single answer; in a batch, the count of containers before it. */
  member: number;
  /** The value's byte range [start, end). */
  start: number;
  end: number;
  /** The value's JSON text; undefined when it is an object or array. */
  text: string | undefined;
}

export interface JsonScan {
  /** Deepest nesting of arrays and objects (`1` for `{"a":1}`, `0` for `5`). */
  depth: number;
  /** The first significant byte: '{', '[' or something else. */
  kind: 'object' | 'array' | 'other';
  /** `id` members of the top object, or of the objects of a top array. */
  ids: IdSpan[];
  /** A string or a container was left open (the bytes are cut short). */
  truncated: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OBJ = 1;
const ARR = 2;

/** Index of the quote closing the string whose opening quote is at `at`, or -1. */
function stringEnd(buf: Buffer, at: number): number {
  return stringClose(buf, at + 1);
}

/**
 * Index of the first unescaped quote at or after `from`, or -1; a backslash before `from` escapes
 * nothing (the string's content starts there, or the byte before was itself escaped).
 */
function stringClose(buf: Buffer, from: number): number {
  let i = from - 1;
  for (;;) {
    i = buf.indexOf(QUOTE, i + 1);
    if (i === -1) return -1;
    let slashes = 0;
    for (let j = i - 1; j >= from && buf[j] === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return i;
  }
}

/** Whether the bytes from `from` to the end close on an odd run of backslashes (the next byte is escaped). */
function endsEscaping(buf: Buffer, from: number): boolean {
  let slashes = 0;
  for (let j = buf.length - 1; j >= from && buf[j] === BACKSLASH; j--) slashes++;
  return slashes % 2 === 1;
}

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The end [exclusive] of a number or literal starting at `at`. */
function scalarEnd(buf: Buffer, at: number): number {
  let i = at;
  while (i < buf.length) {
    const c = buf[i]!;
    if (c === 0x2c || c === 0x7d || c === 0x5d || isSpace(c)) break;
    i++;
  }
  return i;
}

/** Whether the key string at [start, end] (quotes included) is "id", escapes decoded. */
function isIdKey(buf: Buffer, start: number, end: number): boolean {
  if (end - start === 3) return buf[start + 1] === 0x69 && buf[start + 2] === 0x64;
  if (end - start > 40) return false;
  // (a search bounded by the key: Buffer#indexOf would run on to the end of the bytes)
  let slash = false;
  for (let j = start + 1; j < end; j++) if (buf[j] === BACKSLASH) slash = true;
  if (!slash) return false;
  try {
    return JSON.parse(buf.toString('utf8', start, end + 1)) === 'id';
  } catch {
    return false;
  }
}

/**
 * Scans `buf`. With `ids: false` only the depth is measured. The scan stops early once the
 * depth passes `stopAbove` (the caller refuses the bytes anyway) unless ids are wanted.
 */
export function scanJson(buf: Buffer, options: { ids?: boolean; stopAbove?: number } = {}): JsonScan {
  const wantIds = options.ids === true;
  return scanUpTo(buf, newScan(), buf.length, wantIds, wantIds ? Infinity : (options.stopAbove ?? Infinity))!;
}

/**
 * Where a scan of long bytes stands between two slices (`scanUpTo`): the next byte to look at
 * and what the bytes before it said.
 */
export interface ScanState {
  at: number;
  depth: number;
  max: number;
  kind: JsonScan['kind'] | undefined;
  type1: number;
  type2: number;
  member: number;
  keyNext: boolean;
  ids: IdSpan[];
}

/** A scan from the first byte. */
export const newScan = (): ScanState => ({ at: 0, depth: 0, max: 0, kind: undefined, type1: 0, type2: 0, member: -1, keyNext: false, ids: [] });

/**
 * `scanJson` a slice at a time: goes on from `state` over the bytes before `until` (a string or
 * an id that starts before it is read whole, so a slice may end a little past it) and returns
 * the scan once it has its answer, with exactly `scanJson`'s result; otherwise records where it
 * stands in `state` and returns undefined: call again with a later `until`.
 */
export function scanUpTo(buf: Buffer, state: ScanState, until: number, wantIds: boolean, stopAbove: number): JsonScan | undefined {
  const ids = state.ids;
  let depth = state.depth;
  let max = state.max;
  let kind = state.kind;
  // Container types of levels 1 and 2, the only levels where an answer's id can be.
  let type1 = state.type1;
  let type2 = state.type2;
  let member = state.member;
  /** The next string is an object key at level 1 or 2. */
  let keyNext = state.keyNext;
  const n = Math.min(until, buf.length);
  let i = state.at;
  for (; i < n; i++) {
    const c = buf[i]!;
    if (c === QUOTE) {
      const end = stringEnd(buf, i);
      if (end === -1) return { depth: max, kind: kind ?? 'other', ids, truncated: true };
      kind ??= 'other';
      if (keyNext && wantIds && (depth === 1 ? type1 === OBJ : depth === 2 && type1 === ARR && type2 === OBJ) && isIdKey(buf, i, end)) {
        let v = end + 1;
        while (isSpace(buf[v])) v++;
        if (buf[v] === 0x3a) {
          v++;
          while (isSpace(buf[v])) v++;
          const at = depth === 1 ? 0 : member;
          const first = buf[v];
          if (first === QUOTE) {
            const close = stringEnd(buf, v);
            if (close === -1) return { depth: max, kind: kind, ids, truncated: true };
            ids.push({ member: at, start: v, end: close + 1, text: buf.toString('utf8', v, close + 1) });
            i = close;
          } else if (first === 0x7b || first === 0x5b || first === undefined) {
            ids.push({ member: at, start: v, end: v, text: undefined });
            i = v - 1;
          } else {
            const stop = scalarEnd(buf, v);
            ids.push({ member: at, start: v, end: stop, text: buf.toString('latin1', v, stop) });
            i = stop - 1;
          }
          keyNext = false;
          continue;
        }
      }
      keyNext = false;
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > stopAbove) return { depth: max, kind: kind ?? (c === 0x7b ? 'object' : 'array'), ids, truncated: true };
      }
      const t = c === 0x7b ? OBJ : ARR;
      if (depth === 1) {
        kind ??= t === OBJ ? 'object' : 'array';
        type1 = t;
      } else if (depth === 2) {
        type2 = t;
        if (type1 === ARR) member++;
      }
      keyNext = t === OBJ && depth <= 2;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      keyNext = false;
    } else if (c === 0x2c) {
      keyNext = depth === 1 ? type1 === OBJ : depth === 2 && type2 === OBJ;
    } else if (!isSpace(c)) {
      kind ??= 'other';
    }
  }
  if (i >= buf.length) return { depth: max, kind: kind ?? 'other', ids, truncated: depth > 0 };
  state.at = i;
  state.depth = depth;
  state.max = max;
  state.kind = kind;
  state.type1 = type1;
  state.type2 = type2;
  state.member = member;
  state.keyNext = keyNext;
  return undefined;
}

/**
 * Whether the JSON bytes nest deeper than `limit` (stops scanning as soon as they do): exactly
 * `scanJson(buf, { stopAbove: limit }).depth > limit`, in a loop that looks at nothing else, since
 * it runs over answers of tens of megabytes (`deeperAfter` is the same test a chunk at a time).
 */
export function nestsDeeperThan(buf: Buffer, limit: number): boolean {
  if (limit < 0) return true; // any bytes are deeper than that (depth 0 included)
  let depth = 0;
  const n = buf.length;
  for (let i = 0; i < n; i++) {
    const c = buf[i]!;
    if (c === QUOTE) {
      i = stringEnd(buf, i);
      if (i === -1) return false; // cut short inside a string: no deeper than seen so far
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** Where the nesting scan of an answer read a chunk at a time stands (`deeperAfter`); starts at 0, 0. */
export interface NestingState {
  /** Containers open at the end of the bytes so far. */
  nestDepth: number;
  /** 0: outside a string; 1: inside one; 2: inside one, the next byte escaped; -1: deeper than the limit already. */
  nestMode: number;
}

/**
 * `nestsDeeperThan` fed the bytes a chunk at a time as they arrive, so that a large answer's scan
 * is spread over its reading instead of running whole on the event loop once it is complete:
 * after the last chunk, true exactly when `nestsDeeperThan` of all the chunks' bytes is (for a
 * `limit` of 0 or more; once true, later chunks are not looked at). `state` carries the depth and
 * whether a string (or an escape) runs over the chunk's end.
 */
export function deeperAfter(state: NestingState, chunk: Buffer, limit: number): boolean {
  let mode = state.nestMode;
  if (mode < 0) return true;
  const n = chunk.length;
  if (n === 0) return false;
  let i = 0;
  if (mode !== 0) {
    const from = mode === 2 ? 1 : 0; // an escaped first byte cannot close the string
    i = stringClose(chunk, from);
    if (i === -1) {
      state.nestMode = endsEscaping(chunk, from) ? 2 : 1;
      return false;
    }
    i++;
  }
  let depth = state.nestDepth;
  mode = 0;
  for (; i < n; i++) {
    const c = chunk[i]!;
    if (c === QUOTE) {
      const close = stringClose(chunk, i + 1);
      if (close === -1) {
        mode = endsEscaping(chunk, i + 1) ? 2 : 1;
        break;
      }
      i = close;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) {
        state.nestMode = -1;
        return true;
      }
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  state.nestDepth = depth;
  state.nestMode = mode;
  return false;
}

/**
 * The byte ranges [start, end) of the elements of a top-level JSON array, whitespace around each
 * trimmed, as a flat list (start0, end0, start1, end1, …). For bytes already known to be valid
 * JSON (JSON.parse accepted them): a batch's members are forwarded as the client wrote them.
 */
export function arrayElements(buf: Buffer): number[] {
  const spans: number[] = [];
  let i = 0;
  const n = buf.length;
  while (i < n && isSpace(buf[i])) i++;
  if (buf[i] !== 0x5b) return spans;
  let depth = 0;
  let start = -1;
  let last = -1; // index of the last significant byte of the current element
  for (; i < n; i++) {
    const c = buf[i]!;
    if (c === QUOTE) {
      if (depth === 1 && start === -1) start = i;
      i = stringEnd(buf, i);
      if (i === -1) return spans;
      last = i;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth === 2 && start === -1) start = i;
      last = i;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) {
        if (start !== -1) spans.push(start, last + 1);
        return spans;
      }
      last = i;
    } else if (c === 0x2c && depth === 1) {
      if (start !== -1) spans.push(start, last + 1);
      start = -1;
    } else if (!isSpace(c)) {
      if (depth === 1 && start === -1) start = i;
      last = i;
    }
  }
  return spans;
}

/**
 * Whether `buf` is a JSON array of more than `limit` elements, its first-level commas counted
 * (strings skipped): stops as soon as it is, so that a body of a hundred thousand calls is
 * refused after reading a thousand of them, not after JSON.parse built them all. False for bytes
 * that are no array. For bytes that are not valid JSON it may say either.
 */
export function elementsOver(buf: Buffer, limit: number): boolean {
  const n = buf.length;
  let i = 0;
  while (i < n && isSpace(buf[i])) i++;
  if (buf[i] !== 0x5b) return false;
  let depth = 0;
  let commas = 0;
  for (; i < n; i++) {
    const c = buf[i]!;
    if (c === QUOTE) {
      i = stringEnd(buf, i);
      if (i === -1) return false;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) return false;
    } else if (c === 0x2c && depth === 1 && ++commas >= limit) return true;
  }
  return false;
}

/** The JSON text of a member's id as the client wrote it, or `null` (no valid id). */
export function idTextOf(raw: Buffer): string {
  if (raw[0] !== 0x7b) return 'null'; // not an object (an array member's objects have ids of their own)
  const ids = scanJson(raw, { ids: true }).ids;
  const span = ids[ids.length - 1]; // a repeated key: the last counts, as with JSON.parse
  if (span?.text === undefined) return 'null';
  const first = span.text.charCodeAt(0);
  // A string, or a number (the parser refused any other id, and those get `null`).
  return first === 34 || first === 45 || (first >= 48 && first <= 57) ? span.text : 'null';
}

/**
 * What judging JSON bytes (answers.ts assessBody: JSON.parse, the lossless scan, the walk of the
 * tree, the canonical form and its hash) is likely to cost on the thread that does it, in units of
 * one byte of an ordinary answer (hex strings, objects of a few repeated keys: about 50 ns a byte
 * here). Most of the cost is per byte; what costs far more than its bytes is counted on top, in
 * units measured on this machine (`node --import tsx` of assessBody, 2026-11-29, test/bench/README.md):
 * a value (`,`) 10, an object or array 30, an escape 10 (`\u…`) or 2 (`\n`, `\\`…), a number spelled otherwise
 * than JavaScript writes it (a `.`, `e` or `E`, or 16 digits or more: one that may be kept as
 * written, answers.ts parseKeeping) 90, a member of an object 20 for its first 64 members and 200
 * from there on (the keys of one object are distinct, or it is refused: distinct keys are what
 * JSON.parse and the key check pay for). An object of 70 000 keys: about 15 million; a megabyte
 * of eth_getLogs: about 1.8 million.
 *
 * One pass, strings skipped with Buffer#indexOf (native), counting stopped as soon as the cost
 * reaches `stopAt` (the caller only asks whether it does). Bytes that are not JSON are estimated
 * all the same (the judgement then refuses them).
 */
export function judgingCost(buf: Buffer, stopAt = Infinity): number {
  const n = buf.length;
  let cost = n;
  /** Members of the innermost open object so far (-1: the innermost container is an array); those of the outer ones. */
  let members = -1;
  const outer: number[] = [];
  /** The first backslash at or after the last string that held one (n: none left; -1: look again). */
  let slash = -1;
  let i = 0;
  while (i < n && cost < stopAt) {
    const c = buf[i]!;
    if (c === QUOTE) {
      const close = stringEnd(buf, i);
      const end = close === -1 ? n : close;
      // The next backslash is looked for once past the last string that held one (one pass over
      // the bytes in all); a string that holds one is read byte by byte from there, its escapes
      // counted (the escaped character is not the start of another).
      if (slash < i) {
        slash = buf.indexOf(BACKSLASH, i);
        if (slash === -1) slash = n;
      }
      if (slash < end) {
        for (let j = slash; j < end; j++) {
          if (buf[j] === BACKSLASH) cost += buf[++j] === 0x75 /* u */ ? 10 : 2;
        }
        slash = -1;
      }
      i = end + 1;
    } else if (c === 0x2c /* , */) {
      cost += 10;
      i++;
    } else if (c === 0x3a /* : */) {
      members++;
      cost += members > 64 ? 200 : 20;
      i++;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      cost += 30;
      outer.push(members);
      members = c === 0x7b ? 0 : -1;
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      members = outer.pop() ?? -1;
      i++;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const end = scalarEnd(buf, i);
      let spelled = end - i >= 16;
      for (let j = i; j < end && !spelled; j++) {
        const d = buf[j];
        spelled = d === 0x2e || d === 0x65 || d === 0x45;
      }
      if (spelled) cost += 90;
      i = end;
    } else i++;
  }
  return cost;
}

/**
 * Bytes shorter than this never reach `costlyToJudge`'s bound: at most about 26 units a byte
 * (members of one object, `"a":1,`), so they are not scanned for it.
 */
export const costScanFrom = 32 * 1024;
