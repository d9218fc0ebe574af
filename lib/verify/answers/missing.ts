/**
 * What an answer that says "not there" looks like, per method and node client: a null that means
 * the node lacks the block or transaction, the empty bytes of a raw read, an empty list, an
 * unknown-block error. Pure. Such an answer is a vote only from an upstream that could have seen
 * the data (eligibility.ts, eligibility-policy.ts).
 */
import { methodsWhere, ruleOf } from '../../jsonrpc/methods.js';
import type { RpcCall } from '../../jsonrpc/types.js';
import { canonicalForm, sha256Hex } from './canonical.js';

/**
 * Results that mean "this node does not have it" (the method table's `lacking`, derived once):
 * null for these methods (a node that lacks the block or transaction answers null, as it would for one that does not exist; the debug_getRaw*
 * reads on go-ethereum's simulated backend and older clients; a state read whose result is never
 * null for a block the node has, as older Besu answered above its head), and for a method outside
 * the method table (one the config declares with its pin: null is taken as "lacks it").
 */
export const nullMeansMissing: ReadonlySet<string> = new Set(methodsWhere((e) => e.lacking !== undefined));

/**
 * Methods whose result is never empty bytes for data the node has (`lacking: 'nullOrEmptyBytes'`:
 * an RLP header or block, a signed transaction), so `"0x"` means "this node does not have it": reth answers
 * debug_getRawHeader and debug_getRawBlock of a block it lacks with empty bytes.
 */
export const emptyBytesMeanMissing: ReadonlySet<string> = new Set(methodsWhere((e) => e.lacking === 'nullOrEmptyBytes'));

/**
 * Error messages of a node that lacks the block or its state (case-insensitive), by client:
 * - go-ethereum (and Bor, op-geth): "header not found" (a state read at a number it does not
 *   have), "unknown block" (eth_getLogs / eth_call by a hash it does not have), "missing trie
 *   node" and "historical state … is not available" (state pruned);
 * - Erigon, Besu, Reth: "block not found" (Reth also "unknown block", "header not found");
 * - Nethermind: "… could not be found" (e.g. "Block 0x… could not be found") and "header not found";
 * - Anvil: "block … not found", "BlockOutOfRange", "is in the future";
 * - go-ethereum by hash (EIP-1898 `blockHash`): "header for hash not found"; a transaction
 *   lookup still being indexed: "transaction indexing is in progress"; debug_getRawHeader of a
 *   hash it lacks: "header #… not found".
 */
export const missingBlockErrors: readonly RegExp[] = [
  /header not found/i,
  /unknown block/i,
  /block(?: [^\s]+)? not found/i,
  /could not be found/i,
  /missing trie node/i,
  /historical state .*(?:not available|unavailable)/i,
  /block ?out ?of ?range/i,
  /block .*in the future/i,
  /header for hash not found/i,
  /header #.*not found/i,
  /transaction indexing is in progress/i,
];

/** Whether an error message is one of missingBlockErrors (an unknown or pruned block). */
export const lacksBlock = (message: string): boolean => missingBlockErrors.some((re) => re.test(message));

/**
 * Whether an answer reads as "this node lacks the block": a null result of a method that
 * returns null for an unknown block or transaction, or an unknown-block error (missingBlockErrors).
 * Such an answer is not a vote for "empty" when another upstream has the block.
 */
export function answersAsMissing(call: RpcCall, answer: { result?: unknown; error?: { message?: unknown } }): boolean {
  if (answer.error !== undefined) {
    const message = typeof answer.error?.message === 'string' ? answer.error.message : '';
    return missingBlockErrors.some((re) => re.test(message));
  }
  if (answer.result === '0x') return emptyBytesMeanMissing.has(call.method);
  return answer.result === null && (nullMeansMissing.has(call.method) || ruleOf(call.method) === undefined);
}

/** The vote hashes (canonical.ts) of a result that says "not there": the same for every method. */
const nullHash = sha256Hex(canonicalForm('', { result: null }));
const emptyListHash = sha256Hex(canonicalForm('', { result: [] }));
const emptyBytesHash = sha256Hex(canonicalForm('', { result: '0x' }));

/** Bodies up to this size are parsed whole; a longer one only when its first members do not show a result. */
const parsedMaxBytes = 4096;

/**
 * Whether a vote (the loop's `assessed`: the raw body and the hash of its canonical form) says the
 * node lacks the data: answersAsMissing, or an empty list (`[]` logs, receipts of a block it lacks).
 * Whatever the body's size: a `null`, `[]` or `"0x"` padded with whitespace or carrying extra
 * keys has the hash of the short answer (one comparison), and an error with a long message or
 * data is parsed. A longer body whose first members show a result other than `null` (every real
 * answer: `{"jsonrpc":"2.0","id":1,"result":[…`) is not parsed: its hash already said it is no
 * empty result, and an answer with both a result and an error is no vote (answers.ts).
 */
export function answerBodyAsMissing(call: RpcCall, vote: { body: Buffer; hash: string }): boolean {
  const { body, hash } = vote;
  if (hash === emptyListHash) return true;
  if (hash === nullHash) return nullMeansMissing.has(call.method) || ruleOf(call.method) === undefined;
  if (hash === emptyBytesHash) return emptyBytesMeanMissing.has(call.method);
  if (body.length > parsedMaxBytes && showsResult(body)) return false;
  let answer: unknown;
  try {
    answer = JSON.parse(body.toString('utf8'));
  } catch {
    return false;
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return false;
  const a = answer as { result?: unknown; error?: { message?: unknown } };
  return answersAsMissing(call, a) || (Array.isArray(a.result) && a.result.length === 0);
}

const quote = 0x22;
const backslash = 0x5c;
const resultKey = Buffer.from('result');

/**
 * Whether the body's top-level members, read from the start, reach a `result` whose value is not
 * `null` before anything that needs a parser: the members before it are plain strings, numbers,
 * `true`, `false` or `null` (`jsonrpc`, `id`, however long). False (undecided) for anything
 * else: a key with an escape, a nested value first, a `result` of `null`. It reads no further
 * than the result's first byte.
 */
function showsResult(body: Buffer): boolean {
  const end = body.length;
  let i = skipSpace(body, 0, end);
  if (body[i] !== 0x7b /* { */) return false;
  i = skipSpace(body, i + 1, end);
  while (i < end && body[i] === quote) {
    const close = body.indexOf(quote, i + 1);
    if (close < 0 || close >= end) return false;
    const key = body.subarray(i + 1, close);
    if (key.includes(backslash)) return false;
    i = skipSpace(body, close + 1, end);
    if (body[i] !== 0x3a /* : */) return false;
    i = skipSpace(body, i + 1, end);
    if (i >= end) return false;
    const first = body[i]!;
    if (key.equals(resultKey)) return first !== 0x6e /* n */;
    if (first === quote) {
      i = stringEnd(body, i + 1, end);
      if (i < 0) return false;
    } else if (first === 0x7b || first === 0x5b /* { [ */) {
      return false;
    } else {
      while (i < end && body[i] !== 0x2c && body[i] !== 0x7d /* , } */ && !isSpace(body[i]!)) i++;
    }
    i = skipSpace(body, i, end);
    if (body[i] !== 0x2c /* , */) return false;
    i = skipSpace(body, i + 1, end);
  }
  return false;
}

/** The index after the closing quote of a string whose content starts at `i`; -1 past `end`. */
function stringEnd(body: Buffer, i: number, end: number): number {
  for (; i < end; i++) {
    const c = body[i]!;
    if (c === backslash) i++;
    else if (c === quote) return i + 1;
  }
  return -1;
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(body: Buffer, i: number, end: number): number {
  while (i < end && isSpace(body[i]!)) i++;
  return i;
}
