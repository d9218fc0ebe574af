/**
 * What an answer that says "not there" looks like, per method and node client: a null that means
 * the node lacks the block or transaction, the empty bytes of a raw read, an empty list, an
 * unknown-block error. Pure. Such an answer is a vote only from an upstream that could have seen
 * the data (eligibility.ts, eligibility-policy.ts).
 */
import { methodsWhere, ruleOf } from '../../jsonrpc/methods.js';
import type { RpcCall } from '../../jsonrpc/types.js';

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

/** A "missing" answer is short (a null or an error message): a longer body is not parsed. */
const missingMaxBytes = 4096;

/**
 * Whether the raw answer of a single call (the loop's `assessed.body`) looks like the node lacks
 * the data: answersAsMissing, or an empty list (`[]` logs, receipts of a block it lacks). Parsed
 * only when short, so a real answer costs one length check.
 */
export function answerBodyAsMissing(call: RpcCall, body: Buffer): boolean {
  if (body.length > missingMaxBytes) return false;
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

