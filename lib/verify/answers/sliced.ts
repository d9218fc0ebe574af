/**
 * Large answers judged in slices (the worker thread's path, off-thread.ts): assessBody's
 * judgement of an answer whose result is a long list, with memory for one slice of it rather
 * than for the whole answer.
 */
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { RpcCall, RpcPayload } from '../../jsonrpc/types.js';
import { answerOf, assessBody, maxInexactNumbers, readJson, Refusal, tooManyInexact, type Assessment } from './answers.js';
import { resultElementsForm, type IgnoredValue } from './canonical.js';
import { type IgnoredFields } from './compared-fields.js';

/** An Assessment without its canonical text (the hash stands for it). */
export type Judgement = Exclude<Assessment, { ok: true }> | Omit<Extract<Assessment, { ok: true }>, 'canonical'>;

/**
 * assessBody's judgement, without the canonical text, taking memory for a slice of a long list
 * rather than for the whole answer: a single call's answer whose `result` is an array (an
 * eth_getLogs, eth_getBlockReceipts or trace list, the answers that run to tens of megabytes) is
 * read in slices. The object around the list is read with the list left empty, then the
 * elements in runs of a few hundred kilobytes (readJson), written in canonical form
 * (canonical.ts resultElementsForm: the very text canonicalForm writes for them) and hashed as
 * they come; neither the answer's whole text nor its parsed tree nor its canonical text is ever
 * built. The slices are cut by a strict scan of the list (one value, then a comma or the end,
 * whitespace between), so the bytes are JSON exactly when every slice and the rest are. Any
 * other answer, and any slice that is not part of a plain vote (not JSON, a duplicate key, an
 * error, a refusal…), is judged whole by assessBody, so failures and their reasons are its own.
 */
export function judgeBody(
  body: Buffer,
  payload: Pick<RpcPayload, 'batch' | 'calls'>,
  ignored?: IgnoredFields,
  scrub: (text: string) => string = (text) => text,
  asAnswer?: (message: string) => boolean,
): Judgement {
  if (!payload.batch) {
    try {
      const vote = slicedVote(body, payload.calls[0]!, ignored, scrub, asAnswer);
      if (vote) return vote;
    } catch {
      // judged whole below (a pathological element: the same RangeError there, with its reason)
    }
  }
  const a = assessBody(body, payload, ignored, scrub, asAnswer);
  if (!a.ok) return a;
  return a.ignored ? { ok: true, hash: a.hash, ignored: a.ignored } : { ok: true, hash: a.hash };
}

/** The vote of an answer whose result is an array, read a run of elements at a time; undefined: judge it whole. */
function slicedVote(body: Buffer, call: RpcCall, ignored: IgnoredFields | undefined, scrub: (text: string) => string, asAnswer?: (message: string) => boolean): Judgement | undefined {
  if (!isUtf8(body)) return undefined;
  const list = resultList(body);
  if (!list) return undefined;
  // The answer with an empty list in place: its id, and that it is a result and not an error.
  const rest = readJson(`${body.toString('utf8', 0, list.open)}[]${body.toString('utf8', list.close + 1)}`);
  if ('reason' in rest) return undefined;
  const answer = answerOf(rest.value, call, scrub, asAnswer);
  if (typeof answer === 'string' || answer instanceof Refusal || !('result' in answer) || !Array.isArray(answer.result) || answer.result.length !== 0) return undefined;
  const found: IgnoredValue[] = [];
  const sha = createHash('sha256').update('{"result":[');
  const runs = list.runs;
  // Runs of elements of about sliceBytes, read as one small list each: the bytes between them
  // are commas and whitespace only (resultList checked), so each run is JSON exactly when its
  // elements are.
  // (the numbers spelled inexactly are counted over the whole list: more than readJson allows,
  // the answer gets readJson's refusal of the whole, once the rest of the list is proven JSON)
  let inexactLeft = maxInexactNumbers - rest.inexact;
  for (let r = 0; r < runs.length; r += 3) {
    const read = readJson(listText(body, runs[r]!, runs[r + 1]!), inexactLeft);
    if ('reason' in read) return read.reason === tooManyInexact ? overCount(body, runs, r + 3) : undefined;
    inexactLeft -= read.inexact;
    if (r > 0) sha.update(',');
    sha.update(resultElementsForm(call.method, read.value as unknown[], runs[r + 2]!, { ignored, found }));
  }
  const hash = sha.update(']}').digest('hex');
  return found.length > 0 ? { ok: true, hash, ignored: found } : { ok: true, hash };
}

/**
 * The verdict of a list found to carry more numbers spelled inexactly than readJson allows, from
 * run `from` on (runs[from]): readJson refuses the whole answer so once it is JSON, which the runs
 * left are proven to be one at a time (JSON.parse, no number kept); one that is not: undefined
 * (judged whole, which says so).
 */
function overCount(body: Buffer, runs: readonly number[], from: number): Judgement | undefined {
  for (let r = from; r < runs.length; r += 3) {
    try {
      JSON.parse(listText(body, runs[r]!, runs[r + 1]!));
    } catch {
      return undefined;
    }
  }
  return { ok: false, reason: tooManyInexact };
}

/** The bytes of one run of a list's elements read at once (a run holds at least one element). */
const sliceBytes = 256 * 1024;

/**
 * Where a run's bytes are put between brackets before they are decoded: the text of `[`, the
 * bytes, `]` comes out of one decoding as one flat string (a concatenation would leave JSON.parse
 * a rope to flatten first, a copy of the run as costly as its decoding). Kept for the next run;
 * a run longer than a few slices gets a buffer of its own.
 */
let bracketed: Buffer | undefined;

/** `[` + the text of body[start, end) + `]`, as one flat string. */
function listText(body: Buffer, start: number, end: number): string {
  const length = end - start + 2;
  let into = bracketed;
  if (into === undefined || length > into.length) {
    into = Buffer.allocUnsafe(Math.max(length, sliceBytes + 2));
    if (into.length <= 4 * sliceBytes) bracketed = into;
  }
  into[0] = 0x5b;
  body.copy(into, 1, start, end);
  into[length - 1] = 0x5d;
  return into.toString('utf8', 0, length);
}

const isBlank = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipBlank(buf: Buffer, i: number): number {
  while (isBlank(buf[i])) i++;
  return i;
}

/** The end (exclusive) of the string whose opening quote is at `at`, or -1. */
function stringAfter(buf: Buffer, at: number): number {
  let i = at;
  for (;;) {
    i = buf.indexOf(0x22, i + 1);
    if (i === -1) return -1;
    let k = i - 1;
    while (buf[k] === 0x5c) k--;
    if ((i - 1 - k) % 2 === 0) return i + 1;
  }
}

/**
 * The end (exclusive) of the one JSON value that starts at `at` (a string, a container up to the
 * bracket that closes it, or a scalar up to a delimiter), or -1. It does not validate: JSON.parse
 * of the slice does.
 */
function valueAfter(buf: Buffer, at: number): number {
  const c = buf[at];
  if (c === undefined) return -1;
  if (c === 0x22) return stringAfter(buf, at);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let i = at; i < buf.length; i++) {
      const d = buf[i]!;
      if (d === 0x22) {
        i = stringAfter(buf, i);
        if (i === -1) return -1;
        i--;
      } else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        if (--depth === 0) return i + 1;
      }
    }
    return -1;
  }
  let i = at;
  while (i < buf.length) {
    const d = buf[i]!;
    if (d === 0x2c || d === 0x5d || d === 0x7d || isBlank(d)) break;
    i++;
  }
  return i === at ? -1 : i;
}

const resultKey = Buffer.from('"result"');

/**
 * Where the list is in `{…, "result": [e0, e1, …], …}`: its brackets, and its elements cut in runs
 * of about sliceBytes (start, end, index of the first element, for each run: a run holds the
 * elements from the first while the next one still ends within sliceBytes of the run's start,
 * and at least one). Only the runs are kept, not each element's range: a 60 MB list of 15
 * million short numbers has some 240 runs, where two offsets per element took hundreds of
 * megabytes of the judging thread. Undefined unless the bytes are one object with one member
 * written `"result"` whose value is an array, and the list is strictly one value after another,
 * each followed by a comma or its end (whitespace between).
 */
function resultList(buf: Buffer): { open: number; close: number; runs: number[] } | undefined {
  let i = skipBlank(buf, 0);
  if (buf[i] !== 0x7b) return undefined;
  let open = -1;
  i = skipBlank(buf, i + 1);
  if (buf[i] === 0x7d) return undefined;
  for (;;) {
    if (buf[i] !== 0x22) return undefined;
    const keyEnd = stringAfter(buf, i);
    if (keyEnd === -1) return undefined;
    const isResult = keyEnd - i === resultKey.length && buf.compare(resultKey, 0, resultKey.length, i, keyEnd) === 0;
    i = skipBlank(buf, keyEnd);
    if (buf[i] !== 0x3a) return undefined;
    i = skipBlank(buf, i + 1);
    if (isResult && buf[i] === 0x5b) {
      if (open !== -1) return undefined; // written twice: judged whole (a duplicate key)
      open = i;
    }
    const end = valueAfter(buf, i);
    if (end === -1) return undefined;
    i = skipBlank(buf, end);
    if (buf[i] === 0x2c) {
      i = skipBlank(buf, i + 1);
      continue;
    }
    if (buf[i] !== 0x7d || open === -1) return undefined;
    break;
  }
  const runs: number[] = [];
  i = skipBlank(buf, open + 1);
  if (buf[i] === 0x5d) return { open, close: i, runs };
  let runStart = -1;
  let runEnd = -1;
  let first = 0;
  for (let index = 0; ; index++) {
    const end = valueAfter(buf, i);
    if (end === -1) return undefined;
    if (runStart === -1) [runStart, first] = [i, index];
    else if (end - runStart > sliceBytes) {
      runs.push(runStart, runEnd, first);
      [runStart, first] = [i, index];
    }
    runEnd = end;
    i = skipBlank(buf, end);
    if (buf[i] === 0x2c) {
      i = skipBlank(buf, i + 1);
      continue;
    }
    if (buf[i] !== 0x5d) return undefined;
    runs.push(runStart, runEnd, first);
    return { open, close: i, runs };
  }
}
