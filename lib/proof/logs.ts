/**
 * eth_getLogs proven complete over a range of proven headers. For every block, either its
 * header's `logsBloom` rules the filter out (no log of the block can match), or the block's
 * receipts are proven against its `receiptsRoot` and the matching logs are taken from them, in
 * block order, numbered per block (`logIndex` counts every log of the block, matching or not).
 * The list so built is what a complete, honest answer holds; a provider's answer is then compared
 * with it and every difference is named: a log dropped, a log added, a field altered, an order
 * changed.
 *
 * Matching follows eth_getLogs: any of the addresses (none given: any address); topics by
 * position, `null` or an empty list a wildcard there, a list any of its topics. A filter with more
 * topic positions than a log has topics does not match that log (geth's rule, wildcards
 * included); `trailingWildcards: 'match-shorter'` lets wildcard positions past a log's last topic
 * match, for providers that answer that way.
 *
 * What the receipts do not hold is taken elsewhere: `blockHash`, `blockNumber`, `blockTimestamp`
 * from the proven header; `transactionHash` from the proven transactions when the caller passes
 * them (lib/proof/transactions.ts), else from the receipt as served (then not proven).
 */
import { quantity, quantityHex, sameHex } from './bytes.js';
import { bloomMayMatch, bloomQuery, type LogFilter, type LogJson } from './bloom.js';
import { ProofError } from './failure.js';
import type { ProvenHeader } from './header.js';
import { checkReceipts, type ReceiptJson } from './receipts.js';

/** A log as a complete eth_getLogs answer holds it, built from proven data (hex lower case, quantities canonical). */
export interface ProvenLog {
  readonly address: string;
  readonly topics: readonly string[];
  readonly data: string;
  readonly blockHash: string;
  readonly blockNumber: string;
  readonly blockTimestamp: string;
  readonly transactionHash: string | null;
  readonly transactionIndex: string;
  readonly logIndex: string;
  readonly removed: false;
}

export interface LogsOptions {
  /** Whether a wildcard topic position past a log's last topic matches (default `need-topic`, as geth). */
  readonly trailingWildcards?: 'need-topic' | 'match-shorter';
}

/** The receipts of one block, with the transaction hashes when they were proven. */
export interface BlockReceipts {
  readonly receipts: readonly ReceiptJson[];
  /** The block's transaction hashes in order, proven against transactionsRoot; absent: the receipts' own. */
  readonly transactionHashes?: readonly string[] | undefined;
}

const lower = (s: string) => s.toLowerCase();
const asList = (v: string | readonly string[]): readonly string[] => (typeof v === 'string' ? [v] : v);

/** Whether one log matches the filter (eth_getLogs semantics). */
export function logMatches(log: Pick<LogJson, 'address' | 'topics'>, filter: LogFilter, options: LogsOptions = {}): boolean {
  const address = filter.address;
  if (address !== undefined && address !== null) {
    const list = asList(address);
    if (list.length > 0 && !list.some((a) => sameHex(a, log.address))) return false;
  }
  const topics = filter.topics ?? [];
  if (topics.length > log.topics.length && options.trailingWildcards !== 'match-shorter') return false;
  for (const [i, position] of topics.entries()) {
    if (position === null) continue;
    const list = asList(position);
    if (list.length === 0) continue;
    const topic = log.topics[i];
    if (topic === undefined || !list.some((t) => sameHex(t, topic))) return false;
  }
  return true;
}

/** The headers of a range whose bloom may hold a matching log: the blocks whose receipts must be fetched. */
export function blocksToFetch(headers: readonly ProvenHeader[], filter: LogFilter): ProvenHeader[] {
  const query = bloomQuery(filter);
  return headers.filter((h) => bloomMayMatch(h.logsBloom, query));
}

/** The matching logs of one block whose receipts are proven, in block order. */
export function blockLogs(header: ProvenHeader, block: BlockReceipts, filter: LogFilter, options: LogsOptions = {}): ProvenLog[] {
  const out: ProvenLog[] = [];
  const blockNumber = quantityHex(header.number);
  const blockTimestamp = quantityHex(header.timestamp);
  let logIndex = 0;
  for (const [i, receipt] of block.receipts.entries()) {
    const txHash = block.transactionHashes?.[i] ?? (typeof receipt.transactionHash === 'string' ? receipt.transactionHash : null);
    for (const log of receipt.logs) {
      if (logMatches(log, filter, options)) {
        out.push({
          address: lower(log.address),
          topics: log.topics.map(lower),
          data: lower(log.data),
          blockHash: header.hash,
          blockNumber,
          blockTimestamp,
          transactionHash: txHash === null ? null : lower(txHash),
          transactionIndex: quantityHex(BigInt(i)),
          logIndex: quantityHex(BigInt(logIndex)),
          removed: false,
        });
      }
      logIndex += 1;
    }
  }
  return out;
}

/**
 * The complete answer of eth_getLogs over `headers` (a proven range, lowest first): blocks whose
 * bloom rules the filter out are skipped; the receipts of each other block (`receipts`, by block
 * hash) are proven against its receiptsRoot and its matching logs taken. A block that needs its
 * receipts and has none in the map is `malformed` (field `receipts[block N]`).
 */
export async function provenLogs(
  headers: readonly ProvenHeader[],
  filter: LogFilter,
  receipts: ReadonlyMap<string, BlockReceipts>,
  options: LogsOptions = {},
): Promise<ProvenLog[]> {
  const out: ProvenLog[] = [];
  const query = bloomQuery(filter);
  for (const header of headers) {
    if (!bloomMayMatch(header.logsBloom, query)) continue;
    const block = receipts.get(header.hash);
    if (block === undefined) {
      throw new ProofError(`the receipts of block ${header.number} (${header.hash}) are needed: its bloom may match the filter`, {
        reason: 'malformed', field: `receipts[block ${header.number}]`,
      });
    }
    await checkReceipts(header, block.receipts);
    if (block.transactionHashes !== undefined && block.transactionHashes.length !== block.receipts.length) {
      throw ProofError.mismatch('value', `receipts[block ${header.number}]`, `${block.transactionHashes.length} receipts, one per transaction`, `${block.receipts.length} receipts`, "not the block's transactions");
    }
    for (const log of blockLogs(header, block, filter, options)) out.push(log);
  }
  return out;
}

/** One log of an answer that differs from the proven one at the same place. */
export interface AlteredLog {
  readonly proven: ProvenLog;
  readonly answer: LogJson;
  /** Position of the log in the answer. */
  readonly index: number;
  /** The fields that differ (`data`, `topics`, `logIndex`, …). */
  readonly fields: readonly string[];
}

/** Where a provider's eth_getLogs answer differs from the proven logs. */
export interface LogsDiff {
  readonly dropped: readonly ProvenLog[];
  /** Logs of the answer that no proven log is, with their position in the answer. */
  readonly added: readonly { readonly index: number; readonly log: LogJson }[];
  readonly altered: readonly AlteredLog[];
  /** The first position of the answer where the logs are not in block and log order, if any. */
  readonly outOfOrderAt: number | undefined;
}

const QUANTITY_FIELDS = ['blockNumber', 'blockTimestamp', 'transactionIndex', 'logIndex'] as const;
const HEX_FIELDS = ['address', 'data', 'blockHash', 'transactionHash'] as const;

/** The fields where an answer's log differs from the proven one (a field the answer leaves out is not compared, but address, topics and data must be there). */
function differingFields(proven: ProvenLog, log: LogJson): string[] {
  const out: string[] = [];
  for (const f of HEX_FIELDS) {
    const v = log[f];
    const p = proven[f];
    if (v === undefined && f !== 'address' && f !== 'data') continue;
    if (typeof v !== 'string' || p === null || !sameHex(v, p)) out.push(f);
  }
  if (!Array.isArray(log.topics) || log.topics.length !== proven.topics.length || log.topics.some((t, i) => typeof t !== 'string' || !sameHex(t, proven.topics[i]!))) out.push('topics');
  for (const f of QUANTITY_FIELDS) {
    const v = log[f];
    if (v === undefined) continue;
    let n: bigint | undefined;
    try {
      n = quantity(v, f);
    } catch {
      n = undefined;
    }
    if (n !== BigInt(proven[f])) out.push(f);
  }
  if (log.removed !== undefined && log.removed !== false) out.push('removed');
  return out;
}

/** What a log is, whatever its place: block, transaction, emitter, topics, data. */
const contentKey = (blockNumber: bigint, transactionIndex: unknown, address: unknown, topics: unknown, data: unknown): string =>
  `${blockNumber}|${String(transactionIndex)}|${String(address).toLowerCase()}|${Array.isArray(topics) ? topics.map((t) => String(t).toLowerCase()).join(',') : String(topics)}|${String(data).toLowerCase()}`;
const placeKey = (blockNumber: bigint, logIndex: bigint) => `${blockNumber}|${logIndex}`;

function safeQuantity(v: unknown): bigint | undefined {
  if (typeof v !== 'string') return undefined;
  try {
    return quantity(v, 'log');
  } catch {
    return undefined;
  }
}

/**
 * Compares a provider's eth_getLogs answer with the proven logs. Logs are paired by content
 * first (block, transaction index, address, topics, data; so a log dropped from the middle of a
 * block is one log dropped, even if the provider renumbered the ones after it), then what is left
 * by place (block and logIndex: a log whose data or topics were changed is one log altered).
 */
export function diffLogs(proven: readonly ProvenLog[], answer: readonly LogJson[]): LogsDiff {
  const byContent = new Map<string, number[]>();
  for (const [i, p] of proven.entries()) {
    const k = contentKey(BigInt(p.blockNumber), BigInt(p.transactionIndex), p.address, p.topics, p.data);
    const list = byContent.get(k);
    if (list === undefined) byContent.set(k, [i]);
    else list.push(i);
  }
  const pairedProven = new Array<number | undefined>(proven.length).fill(undefined);
  const pairedAnswer = new Array<number | undefined>(answer.length).fill(undefined);
  for (const [j, log] of answer.entries()) {
    const n = safeQuantity(log?.blockNumber);
    const ti = safeQuantity(log?.transactionIndex);
    if (n === undefined || ti === undefined) continue;
    const list = byContent.get(contentKey(n, ti, log.address, log.topics, log.data));
    const i = list?.shift();
    if (i !== undefined) {
      pairedProven[i] = j;
      pairedAnswer[j] = i;
    }
  }
  const byPlace = new Map<string, number>();
  for (const [i, p] of proven.entries()) if (pairedProven[i] === undefined) byPlace.set(placeKey(BigInt(p.blockNumber), BigInt(p.logIndex)), i);
  for (const [j, log] of answer.entries()) {
    if (pairedAnswer[j] !== undefined) continue;
    const n = safeQuantity(log?.blockNumber);
    const li = safeQuantity(log?.logIndex);
    if (n === undefined || li === undefined) continue;
    const i = byPlace.get(placeKey(n, li));
    if (i !== undefined) {
      byPlace.delete(placeKey(n, li));
      pairedProven[i] = j;
      pairedAnswer[j] = i;
    }
  }
  const altered: AlteredLog[] = [];
  const added: { index: number; log: LogJson }[] = [];
  for (const [j, log] of answer.entries()) {
    const i = pairedAnswer[j];
    if (i === undefined) {
      added.push({ index: j, log });
      continue;
    }
    const fields = differingFields(proven[i]!, log);
    if (fields.length > 0) altered.push({ proven: proven[i]!, answer: log, index: j, fields });
  }
  const dropped = proven.filter((_, i) => pairedProven[i] === undefined);
  let outOfOrderAt: number | undefined;
  let last = -1;
  for (const [j, i] of pairedAnswer.entries()) {
    if (i === undefined) continue;
    if (i < last) {
      outOfOrderAt = j;
      break;
    }
    last = i;
  }
  return { dropped, added, altered, outOfOrderAt };
}

const where = (l: Readonly<Record<string, unknown>> | null) => `block ${String(l?.blockNumber)} logIndex ${String(l?.logIndex)}`;

/** A `logs` failure carrying the whole difference. */
export class LogsProofError extends ProofError {
  readonly diff: LogsDiff;
  constructor(message: string, diff: LogsDiff, field: string) {
    super(message, { reason: 'logs', field });
    this.name = 'LogsProofError';
    this.diff = diff;
  }
}

/**
 * Checks a provider's eth_getLogs answer against the proven logs: returns nothing when it holds
 * exactly them, in order; else throws a `LogsProofError` (reason `logs`) whose message names the
 * first few differences (dropped, added, altered with the fields, out of order) and whose `diff`
 * holds all of them.
 */
export function checkLogsAnswer(proven: readonly ProvenLog[], answer: readonly LogJson[]): void {
  if (!Array.isArray(answer)) throw ProofError.malformed('result', answer, 'a list of logs');
  const diff = diffLogs(proven, answer);
  const parts: string[] = [];
  const few = <T>(list: readonly T[], show: (x: T) => string) => `${list.slice(0, 3).map(show).join('; ')}${list.length > 3 ? `; and ${list.length - 3} more` : ''}`;
  if (diff.dropped.length > 0) parts.push(`${diff.dropped.length} dropped (${few(diff.dropped, (d) => where(d as unknown as Readonly<Record<string, unknown>>))})`);
  if (diff.added.length > 0) parts.push(`${diff.added.length} added (${few(diff.added, (a) => `result[${a.index}], ${where(a.log)}`)})`);
  if (diff.altered.length > 0) parts.push(`${diff.altered.length} altered (${few(diff.altered, (a) => `result[${a.index}], ${where(a.proven as unknown as Readonly<Record<string, unknown>>)}: ${a.fields.join(', ')}`)})`);
  if (diff.outOfOrderAt !== undefined) parts.push(`out of order at result[${diff.outOfOrderAt}]`);
  if (parts.length === 0) return;
  const field = diff.altered[0] !== undefined ? `result[${diff.altered[0].index}].${diff.altered[0].fields[0]}`
    : diff.added[0] !== undefined ? `result[${diff.added[0].index}]`
      : diff.outOfOrderAt !== undefined ? `result[${diff.outOfOrderAt}]` : 'result';
  throw new LogsProofError(`eth_getLogs answer differs from the ${proven.length} proven logs: ${parts.join('; ')}`, diff, field);
}

/** A proven log's position among the logs of its own transaction (its block's receipts are needed: the logs of the transactions before it are counted out). */
export function logIndexInTransaction(log: ProvenLog, block: BlockReceipts): bigint {
  const tx = Number(BigInt(log.transactionIndex));
  let before = 0;
  for (let i = 0; i < tx; i += 1) before += block.receipts[i]?.logs.length ?? 0;
  return BigInt(log.logIndex) - BigInt(before);
}

/**
 * Whether an answer that failed `checkLogsAnswer` (its `diff`) holds exactly the proven logs,
 * numbered per transaction instead of per block: no log dropped, added or out of order, no field
 * altered but `logIndex`, and each log's `logIndex` its position in its own transaction (0 at each
 * transaction's first log). Such a provider serves every log as the receipts hold it; only its
 * numbering is not the spec's. `receipts` are the proven receipts of the blocks, by block hash.
 */
export function numberedPerTransaction(proven: readonly ProvenLog[], answer: readonly LogJson[], diff: LogsDiff, receipts: ReadonlyMap<string, BlockReceipts>): boolean {
  if (diff.dropped.length > 0 || diff.added.length > 0 || diff.outOfOrderAt !== undefined || diff.altered.length === 0) return false;
  if (answer.length !== proven.length || diff.altered.some((a) => a.fields.length !== 1 || a.fields[0] !== 'logIndex')) return false;
  // Nothing dropped, added or reordered: the answer's logs are the proven ones, in the same order.
  for (const [i, p] of proven.entries()) {
    const block = receipts.get(p.blockHash);
    const index = safeQuantity(answer[i]?.logIndex);
    if (block === undefined || index === undefined || index !== logIndexInTransaction(p, block)) return false;
  }
  return true;
}
