/**
 * What each provable method asks one provider, and how its answer is proven against the agreed
 * header (lib/proof). A prover returns the proven result in the node's JSON form, throws a
 * `ProofError` when the provider's material does not prove (the provider is charged), or a
 * `MaterialError` when the provider gave no material (a transport failure, a node error, an
 * unknown transaction): another provider is asked either way.
 */
import { RLP } from '@ethereumjs/rlp';
import { dataBytes, keccak, quantity, quantityBytes, toHex } from '../proof/bytes.js';
import { ProofError } from '../proof/failure.js';
import { checkHeader, checkHeaderChain, type BlockJson, type ProvenHeader } from '../proof/header.js';
import { balanceAnswer, checkAccountProof, checkCode, storageAnswer, storageKey, transactionCountAnswer, type AccountProofJson } from '../proof/state.js';
import { checkReceiptAnswer, checkReceipts, checkReceiptsOfTransactions, type ReceiptJson } from '../proof/receipts.js';
import { checkTransactions, typeOf, type TransactionJson } from '../proof/transactions.js';
import { senderOf } from '../proof/sender.js';
import { blocksToFetch, checkLogsAnswer, LogsProofError, numberedPerTransaction, provenLogs, type BlockReceipts } from '../proof/logs.js';
import type { LogFilter, LogJson } from '../proof/bloom.js';
import type { BlockMark, QuirkScope } from '../proof/quirks.js';
import type { RpcCall } from '../jsonrpc/types.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import { callOf } from '../verify/calls.js';
import { agreedHeader, chargeProof, notePerTxNumbering, type AgreedHeader, type BlockPin } from './headers.js';
import { ask, parseAnswer, planFor, type ProofJob } from './job.js';
import { proves } from './mode.js';

/** A provider gave no material to prove (not a lie: a failure, or nothing known). */
export class MaterialError extends Error {}

/** The block the answer is about is under a quirk of the chain (lib/proof/quirks.ts): the request goes by agreement. */
export class NotProvableHere extends Error {}

/** The most blocks an eth_getLogs range is proven over (a wider one goes by agreement). */
export const maxLogsRange = 10_000;

/**
 * The most transactions whose senders a block-wide answer (a full block, a block's receipts)
 * recovers to prove their `from` (each recovery is big-integer curve arithmetic on the event loop): a
 * larger block goes by agreement, its senders vouched for by N providers.
 */
export const maxSendersRecovered = 16;

export interface Proven {
  readonly result: unknown;
  readonly agreed: AgreedHeader;
}

export interface ProofRoute {
  /** What the method needs of the chain (lib/proof/quirks.ts). */
  readonly scopes: readonly QuirkScope[];
  /** The block the answer is about, when the request pins it (agreed before any provider is asked). */
  readonly pin: BlockPin | undefined;
  /** The lowest block of an eth_getLogs range below the pinned top; undefined: the answer is about the pinned block alone. */
  readonly from: bigint | undefined;
  prove(job: ProofJob, upstream: Upstream, agreed: AgreedHeader | undefined): Promise<Proven>;
}

const HASH = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x(?:0|[1-9a-fA-F][0-9a-fA-F]*)$/;
/**
 * The client's own parameters a route reads are checked when it is built: one the proof could
 * not read (an address that is not 20 bytes of hex, a slot beyond 32 bytes or without `0x`, a
 * filter's malformed address or topic) goes by agreement, where the nodes answer it as they do,
 * and is never the failed proof of a provider that answered it.
 */
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const SLOT = /^0x[0-9a-fA-F]{1,64}$/;
const isAddress = (v: unknown): v is string => typeof v === 'string' && ADDRESS.test(v);
const isSlot = (v: unknown): v is string => typeof v === 'string' && SLOT.test(v);

/** A block parameter pinned by number or hash (hex, or an EIP-1898 object); undefined for a tag. */
export function pinOf(value: unknown): BlockPin | undefined {
  if (typeof value === 'string') {
    if (HASH.test(value)) return { hash: value.toLowerCase() };
    return QUANTITY.test(value) ? { number: BigInt(value) } : undefined;
  }
  if (value !== null && typeof value === 'object') {
    const o = value as { blockHash?: unknown; blockNumber?: unknown; requireCanonical?: unknown };
    // `requireCanonical`: the nodes refuse a block a reorg dropped; agreement asks them.
    if (o.requireCanonical !== undefined && o.requireCanonical !== null && o.requireCanonical !== false) return undefined;
    if (typeof o.blockHash === 'string' && HASH.test(o.blockHash)) return { hash: o.blockHash.toLowerCase() };
    if (typeof o.blockNumber === 'string' && QUANTITY.test(o.blockNumber)) return { number: BigInt(o.blockNumber) };
  }
  return undefined;
}

/** pinOf, held to the kind the method names: a number for `…ByNumber…`, a hash for `…ByHash…`/`…ByBlockHash…`. */
function pinOfKind(value: unknown, method: string): BlockPin | undefined {
  const pin = pinOf(value);
  if (pin === undefined) return undefined;
  return (pin.hash !== undefined) === /ByHash|ByBlockHash/.test(method) ? pin : undefined;
}

const hexOf = (n: bigint) => `0x${n.toString(16)}`;

/**
 * Whether every scope the route needs is proven on the chain at the agreed header (for a range,
 * at its lowest block: its time is not known before the headers below are fetched, so a cut-off
 * by time keeps a range that starts below the top on agreement).
 */
export function provesAt(chain: Chain, route: Pick<ProofRoute, 'scopes' | 'from'>, header: ProvenHeader): boolean {
  const mark: BlockMark = route.from === undefined || route.from === header.number ? { number: header.number, timestamp: header.timestamp } : { number: route.from, timestamp: undefined };
  return route.scopes.every((scope) => proves(chain, scope, mark));
}

/** For a route that agrees on its header itself (a receipt, a transaction by hash): the request goes by agreement when the block is under a quirk. */
function mustProveAt(job: ProofJob, scopes: readonly QuirkScope[], agreed: AgreedHeader): void {
  if (!provesAt(job.chain, { scopes, from: undefined }, agreed.header)) throw new NotProvableHere(`block ${agreed.header.number} is under a quirk of chain ${job.chain.id}`);
}

async function material(job: ProofJob, upstream: Upstream, method: string, params: readonly unknown[]): Promise<unknown> {
  const asked = await ask(job, upstream, method, params);
  if (!asked.ok) throw new MaterialError(asked.reason);
  return asked.result;
}

/** The route of a call that can be proven, or undefined (it goes by agreement). */
export function proofRoute(call: RpcCall): ProofRoute | undefined {
  const p = call.params;
  switch (call.method) {
    case 'eth_getBalance':
    case 'eth_getTransactionCount':
    case 'eth_getCode':
      return stateRoute(call.method, p[0], undefined, pinOf(p[1]));
    case 'eth_getStorageAt':
      return stateRoute(call.method, p[0], p[1], pinOf(p[2]));
    case 'eth_getProof':
      return proofOfProof(p[0], p[1], pinOf(p[2]));
    case 'eth_getBlockReceipts':
      return blockReceiptsRoute(pinOf(p[0]));
    case 'eth_getTransactionReceipt':
      return typeof p[0] === 'string' && HASH.test(p[0]) ? receiptRoute(p[0].toLowerCase()) : undefined;
    // A method's own kind of pin only: nodes read a 32-byte hex `ByNumber` parameter as a number (too large), not a hash.
    case 'eth_getBlockByNumber':
    case 'eth_getBlockByHash':
      return p[1] === true ? fullBlockRoute(pinOfKind(p[0], call.method)) : undefined;
    case 'eth_getLogs':
      return logsRoute(p[0]);
    case 'eth_getTransactionByBlockNumberAndIndex':
    case 'eth_getTransactionByBlockHashAndIndex':
      return typeof p[1] === 'string' && QUANTITY.test(p[1]) ? transactionAtRoute(pinOfKind(p[0], call.method), Number(BigInt(p[1]))) : undefined;
    case 'eth_getTransactionByHash':
      return typeof p[0] === 'string' && HASH.test(p[0]) ? transactionRoute(p[0].toLowerCase()) : undefined;
    default:
      return undefined;
  }
}

function stateRoute(method: 'eth_getBalance' | 'eth_getTransactionCount' | 'eth_getCode' | 'eth_getStorageAt', address: unknown, slot: unknown, pin: BlockPin | undefined): ProofRoute | undefined {
  if (pin === undefined || !isAddress(address)) return undefined;
  if (method === 'eth_getStorageAt' && !isSlot(slot)) return undefined;
  return {
    scopes: ['state'],
    pin,
    from: undefined,
    async prove(job, upstream, agreed) {
      const header = agreed!.header;
      const at = hexOf(header.number);
      const slots = method === 'eth_getStorageAt' ? [slot as string] : [];
      // Nodes refuse eth_getProof keys shorter than 32 bytes (anvil): the slot padded.
      const proof = (await material(job, upstream, 'eth_getProof', [address, slots.map((s) => storageKey(s)), at])) as AccountProofJson;
      const account = await checkAccountProof(header, proof, { address, slots });
      if (method === 'eth_getCode') {
        const code = await material(job, upstream, 'eth_getCode', [address, at]);
        return { result: checkCode(account, code as string), agreed: agreed! };
      }
      // The proven value (the provider's own answer to the method is not asked: the proof holds it).
      const result = method === 'eth_getBalance' ? balanceAnswer(account) : method === 'eth_getTransactionCount' ? transactionCountAnswer(account) : storageAnswer(account, slot as string);
      return { result, agreed: agreed! };
    },
  };
}

function proofOfProof(address: unknown, keys: unknown, pin: BlockPin | undefined): ProofRoute | undefined {
  if (pin === undefined || !isAddress(address) || !Array.isArray(keys) || !keys.every(isSlot)) return undefined;
  return {
    scopes: ['state'],
    pin,
    from: undefined,
    async prove(job, upstream, agreed) {
      const proof = (await material(job, upstream, 'eth_getProof', [address, keys.map((k: string) => storageKey(k)), hexOf(agreed!.header.number)])) as AccountProofJson;
      await checkAccountProof(agreed!.header, proof, { address, slots: keys as string[] });
      checkProofAnswer(proof, keys as string[]);
      return { result: proof, agreed: agreed! };
    },
  };
}

const accountProofFields: ReadonlySet<string> = new Set(['address', 'balance', 'codeHash', 'nonce', 'storageHash', 'accountProof', 'storageProof']);
const storageProofFields: ReadonlySet<string> = new Set(['key', 'value', 'proof']);

/**
 * An eth_getProof answer, proven (checkAccountProof: every value it states, a proof of each
 * slot asked), is also the answer to the question: one storage proof per key asked, in the
 * order asked (clients read them by position), else a lie (charged); and no field beyond the
 * proof's, else it goes by agreement.
 */
function checkProofAnswer(proof: AccountProofJson, keys: readonly string[]): void {
  const items = proof.storageProof as readonly { key?: unknown }[];
  if (items.length !== keys.length) throw ProofError.mismatch('value', 'result.storageProof', `${keys.length} storage proofs`, `${items.length}`, 'not one per key asked');
  for (const [i, item] of items.entries()) {
    const asked = storageKey(keys[i]!, `keys[${i}]`);
    if (storageKey(item.key as string, `storageProof[${i}].key`) !== asked) throw ProofError.mismatch('value', `result.storageProof[${i}].key`, asked, String(item.key), 'not the key asked at that position');
    const extra = unprovenKey(item, storageProofFields);
    if (extra !== undefined) throw new NotProvableHere(`result.storageProof[${i}].${extra} is in no proof: vouched for by agreement`);
  }
  const extra = unprovenKey(proof, accountProofFields);
  if (extra !== undefined) throw new NotProvableHere(`result.${extra} is in no proof: vouched for by agreement`);
}

function blockReceiptsRoute(pin: BlockPin | undefined): ProofRoute | undefined {
  if (pin === undefined) return undefined;
  return {
    scopes: ['receipts', 'header'],
    pin,
    from: undefined,
    async prove(job, upstream, agreed) {
      tooManySenders(agreed!);
      const receipts = await material(job, upstream, 'eth_getBlockReceipts', [hexOf(agreed!.header.number)]);
      if (!Array.isArray(receipts)) throw new MaterialError('eth_getBlockReceipts: no receipts');
      const { proven, txs } = await receiptsOfTransactions(job, upstream, agreed!, receipts as ReceiptJson[]);
      checkSenders(agreed!, txs, proven);
      return { result: proven, agreed: agreed! };
    },
  };
}

/**
 * A block's receipts proven against its receiptsRoot, and each bound to its transaction: the
 * receipts trie holds no transaction hash, so a receipt's `transactionHash` (and its logs') is
 * the provider's word until the block's transactions, proven against transactionsRoot, say which
 * transaction is at its index (checkReceiptsOfTransactions, with `to`).
 * Without that, a provider could label a receipt with any hash, one of another transaction of
 * the block or one never mined, and it would pass as proven.
 */
async function receiptsOfTransactions(job: ProofJob, upstream: Upstream, agreed: AgreedHeader, receipts: readonly ReceiptJson[]): Promise<{ proven: readonly ReceiptJson[]; txs: TransactionJson[] }> {
  const proven = await checkReceipts(agreed.header, receipts);
  const txs = await provenTransactions(job, upstream, agreed);
  checkReceiptsOfTransactions(proven, txs.map((tx) => ({ hash: String(tx.hash), to: typeof tx.to === 'string' ? tx.to : null })));
  // Each log's logIndex is its place among the block's logs (as the logs route serves them); a
  // provider that numbers them otherwise (per transaction) is not charged: agreement decides.
  let logIndex = 0n;
  for (const [i, r] of proven.entries()) {
    for (const [k, log] of r.logs.entries()) {
      if (log.logIndex !== undefined && !sameQuantity(log.logIndex, logIndex, `receipts[${i}].logs[${k}].logIndex`)) {
        throw new NotProvableHere(`receipts[${i}].logs[${k}].logIndex is not its place among the block's logs: vouched for by agreement`);
      }
      logIndex += 1n;
    }
  }
  return { proven, txs };
}

/**
 * The `from` of a proven transaction (and of its receipt, when given) checked against the sender
 * its signature recovers to (lib/proof/sender.ts): the block's hashes commit to the signature, not
 * to the address, so a `from` as served is the provider's word until then.
 */
function checkSender(tx: TransactionJson, field: string, receipt?: ReceiptJson, receiptField?: string, agreed?: AgreedHeader): void {
  if (agreed !== undefined) checkTransactionExtras(agreed, tx, field);
  const sender = senderOf(tx, field);
  if (typeof tx.from !== 'string' || tx.from.toLowerCase() !== sender) {
    throw ProofError.mismatch('value', `${field}.from`, sender, String(tx.from), 'not the signer of the transaction');
  }
  const from = receipt?.from;
  if (receipt !== undefined && (typeof from !== 'string' || from.toLowerCase() !== sender)) {
    throw ProofError.mismatch('value', `${receiptField}.from`, sender, String(from), 'not the signer of its transaction');
  }
}

/**
 * A full block's fields that its hash does not commit to, nor its transactions root (`size`,
 * `uncles`, `withdrawals`, `totalDifficulty`, a chain's extras), must be what every one of the N
 * that agreed on the block (its JSON without transactions) sent: else they would be one
 * provider's word. Otherwise (a field they did not all send alike, a header only linked to an
 * agreed one) the block goes by agreement, which vouches for each field or leaves it out.
 */
function agreedBeyondHeader(agreed: AgreedHeader, block: BlockJson): void {
  if (agreed.linked) throw new NotProvableHere(`block ${agreed.header.number}: its header is proven by its link to an agreed one, its other fields are vouched for by agreement`);
  const sent = agreed.members.map((m) => {
    try {
      return (JSON.parse(m.body.toString('utf8')) as { result?: BlockJson }).result ?? {};
    } catch {
      return {};
    }
  });
  const keys = new Set(Object.keys(block));
  for (const b of sent) for (const key of Object.keys(b)) keys.add(key);
  keys.delete('transactions');
  for (const key of keys) {
    const theirs = JSON.stringify(block[key] ?? null).toLowerCase();
    if (!sent.every((b) => JSON.stringify(b[key] ?? null).toLowerCase() === theirs)) {
      throw new NotProvableHere(`block ${agreed.header.number}: its ${key} is not what the ${agreed.members.length} providers that agreed on it all sent: vouched for by agreement`);
    }
  }
}

/** Before any material is asked: a block the agreed header lists more than maxSendersRecovered transactions of goes by agreement. */
function tooManySenders(agreed: AgreedHeader): void {
  const listed = agreed.block.transactions;
  if (Array.isArray(listed) && listed.length > maxSendersRecovered) throw new NotProvableHere(`block ${agreed.header.number} holds ${listed.length} transactions: their senders are vouched for by agreement`);
}

/** Every transaction's sender checked (checkSender), or the block goes by agreement when it holds more than maxSendersRecovered. */
function checkSenders(agreed: AgreedHeader, txs: readonly TransactionJson[], receipts?: readonly ReceiptJson[]): void {
  if (txs.length > maxSendersRecovered) throw new NotProvableHere(`block ${agreed.header.number} holds ${txs.length} transactions: their senders are vouched for by agreement`);
  for (const [i, tx] of txs.entries()) {
    checkSender(tx, `transactions[${i}]`, receipts?.[i], `receipts[${i}]`, receipts === undefined ? agreed : undefined);
    if (receipts?.[i] !== undefined) checkDerived(agreed, tx, receipts[i]!, i);
  }
}

/**
 * A receipt's fields that no root commits to but its transaction and block decide (its `gasUsed`
 * is checkReceiptsOfTransactions'): `contractAddress` (of a contract
 * creation: keccak(rlp([sender, nonce])); else none) and `effectiveGasPrice` (the gas price, or
 * min(maxFeePerGas, baseFee + maxPriorityFeePerGas)). Chains price and deploy their own ways (an
 * L2's gas price, a deposit): a value other than these rules give is not charged, the receipt
 * goes by agreement. Run after checkSender (`from` is the recovered sender).
 */
function checkDerived(agreed: AgreedHeader, tx: TransactionJson, receipt: ReceiptJson, index: number): void {
  const field = `receipts[${index}]`;
  checkReceiptExtras(agreed, tx, receipt, field);
  const type = typeOf(tx, `transactions[${index}]`);
  const byAgreement = (what: string) => new NotProvableHere(`${field}.${what} is not what the transaction and block give: vouched for by agreement`);
  if (type === 0x7e) {
    // A deposit pays no gas price and deploys at an address its nonce (outside the encoding) decides.
    if (receipt.contractAddress !== undefined && receipt.contractAddress !== null) throw byAgreement('contractAddress');
    if (receipt.effectiveGasPrice !== undefined && !sameQuantity(receipt.effectiveGasPrice, 0n, `${field}.effectiveGasPrice`)) throw byAgreement('effectiveGasPrice');
    return;
  }
  const created = tx.to === undefined || tx.to === null;
  const address = receipt.contractAddress;
  if (created) {
    const expected = toHex(keccak(RLP.encode([dataBytes(receipt.from, `${field}.from`, 20), quantityBytes(tx.nonce, `transactions[${index}].nonce`)])).subarray(12));
    if (typeof address !== 'string' || address.toLowerCase() !== expected) throw byAgreement('contractAddress');
  } else if (address !== undefined && address !== null) throw byAgreement('contractAddress');
  if (receipt.effectiveGasPrice !== undefined) {
    const baseFee = agreed.block.baseFeePerGas;
    const price =
      type === 0 || type === 1
        ? quantity(tx.gasPrice, `transactions[${index}].gasPrice`)
        : baseFee === undefined || baseFee === null
          ? undefined
          : minimum(quantity(tx.maxFeePerGas, `transactions[${index}].maxFeePerGas`), quantity(baseFee, 'baseFeePerGas') + quantity(tx.maxPriorityFeePerGas, `transactions[${index}].maxPriorityFeePerGas`));
    if (price === undefined || quantity(receipt.effectiveGasPrice, `${field}.effectiveGasPrice`) !== price) throw byAgreement('effectiveGasPrice');
  }
}

const minimum = (a: bigint, b: bigint) => (a < b ? a : b);

/** Whether a quantity (hex, or a plain JSON integer as anvil writes a receipt's blockTimestamp) is `b`. */
const sameQuantity = (a: unknown, b: bigint, field: string): boolean => {
  if (typeof a === 'number') return Number.isSafeInteger(a) && BigInt(a) === b;
  try {
    return quantity(a, field) === b;
  } catch {
    return false;
  }
};

/**
 * The fields of a served transaction that a proof vouches for, by type: those its encoding holds
 * (lib/proof/transactions.ts), and `hash`, `blockHash`, `blockNumber`, `transactionIndex` (the
 * block's transactions), `from` (its signature), `blockTimestamp` (the header), and those
 * checkTransactionExtras derives: a legacy transaction's `chainId` and `yParity` (from `v`), a
 * typed one's `v` (its `yParity`), a fee-market one's `gasPrice`. A deposit's `nonce` (its
 * sender's, not encoded) is not among them. Any other field with a value (an L2's
 * `l1BlockNumber`, a client's own) is the prover's word: the answer goes by agreement.
 */
const provenTransactionFields: ReadonlyMap<number, ReadonlySet<string>> = (() => {
  const every = ['type', 'hash', 'blockHash', 'blockNumber', 'transactionIndex', 'from', 'blockTimestamp', 'to', 'value', 'gas', 'input'];
  const signed = [...every, 'nonce', 'v', 'r', 's', 'yParity', 'chainId'];
  const feeMarket = [...signed, 'maxFeePerGas', 'maxPriorityFeePerGas', 'accessList', 'gasPrice'];
  return new Map<number, ReadonlySet<string>>([
    [0, new Set([...signed, 'gasPrice'])],
    [1, new Set([...signed, 'gasPrice', 'accessList'])],
    [2, new Set(feeMarket)],
    [3, new Set([...feeMarket, 'maxFeePerBlobGas', 'blobVersionedHashes'])],
    [4, new Set([...feeMarket, 'authorizationList'])],
    [0x7e, new Set([...every, 'sourceHash', 'mint', 'isSystemTx', 'gasPrice', 'v', 'r', 's', 'yParity'])],
  ]);
})();
const accessEntryFields: ReadonlySet<string> = new Set(['address', 'storageKeys']);
const authorizationFields: ReadonlySet<string> = new Set(['chainId', 'address', 'nonce', 'yParity', 'v', 'r', 's']);

/** The first key of `o` with a value that is not in `fields` (undefined: none). */
const unprovenKey = (o: object, fields: ReadonlySet<string>): string | undefined => Object.keys(o).find((k) => (o as Record<string, unknown>)[k] !== null && !fields.has(k));

/**
 * A served transaction's fields outside its encoding: only those provenTransactionFields names,
 * each what the block, the encoding and the signature give: `blockTimestamp` (the header's), a
 * legacy transaction's `chainId` and `yParity` (from its `v`: 35 + 2·chainId + parity, or 27/28
 * with no chain id), `v` beside `yParity` (the same parity, an authorization's too), a
 * fee-market transaction's `gasPrice` (min(maxFeePerGas, baseFee + tip)), a deposit's
 * signature and gas price (zero). Otherwise the answer goes by agreement.
 */
function checkTransactionExtras(agreed: AgreedHeader, tx: TransactionJson, field: string): void {
  const byAgreement = (what: string) => new NotProvableHere(`${field}.${what} is not what the block gives: vouched for by agreement`);
  const unproven = (what: string) => new NotProvableHere(`${field}.${what} is in no root the agreed header holds: vouched for by agreement`);
  if (tx.blockTimestamp !== undefined && !sameQuantity(tx.blockTimestamp, agreed.header.timestamp, `${field}.blockTimestamp`)) throw byAgreement('blockTimestamp');
  const type = typeOf(tx, field);
  const fields = provenTransactionFields.get(type);
  if (fields === undefined) throw unproven('type');
  const extra = unprovenKey(tx, fields);
  if (extra !== undefined) throw unproven(extra);
  const given = (k: string) => tx[k] !== undefined && tx[k] !== null;
  if (type === 0x7e) {
    for (const k of ['gasPrice', 'v', 'r', 's', 'yParity']) if (given(k) && !sameQuantity(tx[k], 0n, `${field}.${k}`)) throw unproven(k);
    return;
  }
  if (type === 0) {
    const v = quantity(tx.v, `${field}.v`);
    const eip155 = v >= 35n;
    if (given('chainId') && !(eip155 && sameQuantity(tx.chainId, (v - 35n) >> 1n, `${field}.chainId`))) throw byAgreement('chainId');
    if (given('yParity') && !sameQuantity(tx.yParity, eip155 ? (v - 35n) & 1n : v - 27n, `${field}.yParity`)) throw byAgreement('yParity');
    return;
  }
  const entries = (k: string): unknown[] => (Array.isArray(tx[k]) ? (tx[k] as unknown[]) : []);
  for (const [i, entry] of entries('accessList').entries()) {
    const key = entry !== null && typeof entry === 'object' ? unprovenKey(entry, accessEntryFields) : undefined;
    if (key !== undefined) throw unproven(`accessList[${i}].${key}`);
  }
  for (const [i, a] of entries('authorizationList').entries()) {
    if (a === null || typeof a !== 'object') continue;
    const key = unprovenKey(a, authorizationFields);
    if (key !== undefined) throw unproven(`authorizationList[${i}].${key}`);
    const { v, yParity } = a as { v?: unknown; yParity?: unknown };
    if (v !== undefined && v !== null && yParity !== undefined && yParity !== null && !sameQuantity(v, quantity(yParity, `${field}.authorizationList[${i}].yParity`), `${field}.authorizationList[${i}].v`)) throw byAgreement(`authorizationList[${i}].v`);
  }
  if (given('yParity') && given('v') && !sameQuantity(tx.v, quantity(tx.yParity, `${field}.yParity`), `${field}.v`)) throw byAgreement('v');
  if (type >= 2 && tx.gasPrice !== undefined) {
    const baseFee = agreed.block.baseFeePerGas;
    if (baseFee === undefined || baseFee === null) throw byAgreement('gasPrice');
    const price = minimum(quantity(tx.maxFeePerGas, `${field}.maxFeePerGas`), quantity(baseFee, 'baseFeePerGas') + quantity(tx.maxPriorityFeePerGas, `${field}.maxPriorityFeePerGas`));
    if (!sameQuantity(tx.gasPrice, price, `${field}.gasPrice`)) throw byAgreement('gasPrice');
  }
}

/**
 * The fields of a served receipt that a proof vouches for: those its block's receipts trie holds
 * (`status`, or `root` before Byzantium; a deposit's `depositNonce` and `depositReceiptVersion`),
 * and those checkReceipts, checkReceiptDetails, checkSender, checkDerived and checkReceiptExtras
 * check against the proven transactions and the agreed header. Any other field with a value
 * (`blobGasPrice`: the blob base fee, whose update fraction is the fork's; an L2's `l1Fee`,
 * `l1GasPrice`, `gasUsedForL1`…) is the prover's word: the receipt goes by agreement.
 */
const provenReceiptFields: ReadonlySet<string> = new Set([
  'type', 'status', 'cumulativeGasUsed', 'logsBloom', 'logs', 'transactionHash', 'transactionIndex', 'blockHash', 'blockNumber',
  'gasUsed', 'from', 'to', 'contractAddress', 'effectiveGasPrice', 'blockTimestamp', 'blobGasUsed',
]);
/** A served log's fields a proof vouches for: the trie's (`address`, `topics`, `data`) and those checked against the block and its receipt. */
const provenLogFields: ReadonlySet<string> = new Set([
  'address', 'topics', 'data', 'blockHash', 'blockNumber', 'blockTimestamp', 'transactionHash', 'transactionIndex', 'logIndex', 'removed',
]);

/** Whether a receipt's field is vouched for by its proof (provenReceiptFields, and what its encoding holds for its type and form). */
function provenReceiptField(receipt: ReceiptJson, key: string): boolean {
  if (provenReceiptFields.has(key)) return true;
  if (key === 'root') return receipt.status === undefined || receipt.status === null;
  if (key === 'depositNonce' || key === 'depositReceiptVersion') return receipt.type !== undefined && receipt.type !== null && quantity(receipt.type, 'type') === 0x7en;
  return false;
}

/**
 * A served receipt's fields its block decides: `blockTimestamp` (its own and its logs'), `removed` false, a blob transaction's `blobGasUsed`;
 * and no field a proof does not vouch for (provenReceiptFields).
 */
function checkReceiptExtras(agreed: AgreedHeader, tx: TransactionJson, receipt: ReceiptJson, field: string): void {
  const byAgreement = (what: string) => new NotProvableHere(`${field}.${what} is not what the block gives: vouched for by agreement`);
  const unproven = (what: string) => new NotProvableHere(`${field}.${what} is in no root the agreed header holds: vouched for by agreement`);
  for (const key of Object.keys(receipt)) {
    if (receipt[key] !== null && !provenReceiptField(receipt, key)) throw unproven(key);
  }
  const timestamp = agreed.header.timestamp;
  if (receipt.blockTimestamp !== undefined && !sameQuantity(receipt.blockTimestamp, timestamp, `${field}.blockTimestamp`)) throw byAgreement('blockTimestamp');
  for (const [k, log] of receipt.logs.entries()) {
    for (const key of Object.keys(log)) {
      if ((log as Record<string, unknown>)[key] !== null && !provenLogFields.has(key)) throw unproven(`logs[${k}].${key}`);
    }
    if (log.blockTimestamp !== undefined && !sameQuantity(log.blockTimestamp, timestamp, `${field}.logs[${k}].blockTimestamp`)) throw byAgreement(`logs[${k}].blockTimestamp`);
    if (log.removed !== undefined && log.removed !== false) throw byAgreement(`logs[${k}].removed`);
  }
  const hashes = tx.blobVersionedHashes;
  if (receipt.blobGasUsed !== undefined && (!Array.isArray(hashes) || !sameQuantity(receipt.blobGasUsed, 131072n * BigInt(hashes.length), `${field}.blobGasUsed`))) throw byAgreement('blobGasUsed');
}

/**
 * The header of the block a transaction's or receipt's answer names, agreed at the number the
 * answer gives, and only if its hash is the one the answer names: nodes keep a block a reorg
 * dropped, by hash, and a provider could name one that holds a transaction the chain does not
 * (or holds elsewhere). One agreement, by number, so the chain's block: a block named that is not
 * it is a lie (charged); when N providers cannot agree on that number yet (a block just mined),
 * agreement answers.
 */
async function namedBlock(job: ProofJob, answer: { readonly [field: string]: unknown }, what: string): Promise<AgreedHeader> {
  const { blockHash, blockNumber } = answer as { blockHash: string; blockNumber?: unknown };
  if (typeof blockNumber !== 'string' || !QUANTITY.test(blockNumber)) throw new MaterialError(`${what}: no block number (asked by agreement)`);
  const number = BigInt(blockNumber);
  let agreed: AgreedHeader | undefined;
  try {
    agreed = await agreedHeader(job, { number });
  } catch (err) {
    if (job.signal.aborted) throw err;
    throw new NotProvableHere(`block ${blockNumber}: the chain's block at that number is not agreed yet: vouched for by agreement`);
  }
  if (agreed === undefined) throw ProofError.mismatch('wrong-block', 'blockNumber', 'a block N providers know', blockNumber, `the ${what} names a block no N providers have`);
  if (agreed.header.hash.toLowerCase() !== blockHash.toLowerCase()) {
    throw ProofError.mismatch('wrong-block', 'blockHash', agreed.header.hash, blockHash, `not the chain's block ${blockNumber} (one a reorg dropped, or none)`);
  }
  return agreed;
}

/** A receipt pins no block: its own blockHash says which header to agree on; the block's receipts prove it. */
function receiptRoute(txHash: string): ProofRoute {
  return {
    scopes: ['receipts', 'header'],
    pin: undefined,
    from: undefined,
    async prove(job, upstream) {
      const answer = (await material(job, upstream, 'eth_getTransactionReceipt', [txHash])) as ReceiptJson | null;
      if (answer === null || typeof answer !== 'object' || typeof answer.blockHash !== 'string' || !HASH.test(answer.blockHash)) {
        throw new MaterialError('eth_getTransactionReceipt: no receipt (an unknown transaction is not proven: asked by agreement)');
      }
      const agreed = await namedBlock(job, answer, 'receipt');
      mustProveAt(job, ['receipts', 'header'], agreed);
      const receipts = await material(job, upstream, 'eth_getBlockReceipts', [agreed.header.hash]);
      if (!Array.isArray(receipts)) throw new MaterialError('eth_getBlockReceipts: no receipts');
      const { proven, txs } = await receiptsOfTransactions(job, upstream, agreed, receipts as ReceiptJson[]);
      const receipt = checkReceiptAnswer(proven, answer, txHash);
      const index = proven.indexOf(receipt);
      checkSender(txs[index]!, `transactions[${index}]`, receipt, `receipts[${index}]`);
      checkDerived(agreed, txs[index]!, receipt, index);
      if (answer.from !== undefined && (typeof answer.from !== 'string' || answer.from.toLowerCase() !== String(receipt.from).toLowerCase())) {
        throw ProofError.mismatch('value', 'result.from', String(receipt.from), String(answer.from), 'not the signer of its transaction');
      }
      return { result: receipt, agreed };
    },
  };
}

function fullBlockRoute(pin: BlockPin | undefined): ProofRoute | undefined {
  if (pin === undefined) return undefined;
  return {
    scopes: ['header'],
    pin,
    from: undefined,
    async prove(job, upstream, agreed) {
      tooManySenders(agreed!);
      const block = (await material(job, upstream, 'eth_getBlockByHash', [agreed!.header.hash, true])) as BlockJson | null;
      if (block === null || typeof block !== 'object') throw new MaterialError('eth_getBlockByHash: no block');
      checkHeader(block, agreed!.header.hash);
      const txs = block.transactions;
      if (!Array.isArray(txs)) throw ProofError.malformed('transactions', txs, 'a list of transactions');
      await checkTransactions(agreed!.header, txs as TransactionJson[]);
      checkSenders(agreed!, txs as TransactionJson[]);
      agreedBeyondHeader(agreed!, block);
      return { result: block, agreed: agreed! };
    },
  };
}

/** A block's transactions proven from one provider's full block against the agreed header. */
async function provenTransactions(job: ProofJob, upstream: Upstream, agreed: AgreedHeader): Promise<TransactionJson[]> {
  return (await transactionsOf(job, upstream, agreed.header)).txs;
}

/** A block's transactions, and their hashes, proven from one provider's full block against a proven header. */
async function transactionsOf(job: ProofJob, upstream: Upstream, header: ProvenHeader): Promise<{ txs: TransactionJson[]; hashes: string[] }> {
  const block = (await material(job, upstream, 'eth_getBlockByHash', [header.hash, true])) as BlockJson | null;
  if (block === null || typeof block !== 'object') throw new MaterialError('eth_getBlockByHash: no block');
  checkHeader(block, header.hash);
  const txs = block.transactions;
  if (!Array.isArray(txs)) throw ProofError.malformed('transactions', txs, 'a list of transactions');
  const hashes = await checkTransactions(header, txs as TransactionJson[]);
  return { txs: txs as TransactionJson[], hashes };
}

/** The transaction at an index of a pinned block: the block's transactions proven; past the last, null (proven too). */
function transactionAtRoute(pin: BlockPin | undefined, index: number): ProofRoute | undefined {
  if (pin === undefined || !Number.isSafeInteger(index)) return undefined;
  return {
    scopes: ['header'],
    pin,
    from: undefined,
    async prove(job, upstream, agreed) {
      const txs = await provenTransactions(job, upstream, agreed!);
      const tx = txs[index];
      if (tx !== undefined) checkSender(tx, `transactions[${index}]`, undefined, undefined, agreed!);
      return { result: tx ?? null, agreed: agreed! };
    },
  };
}

/** A transaction by hash: the provider's answer names its block, whose header is agreed; the block's transactions prove it. */
function transactionRoute(txHash: string): ProofRoute {
  return {
    scopes: ['header'],
    pin: undefined,
    from: undefined,
    async prove(job, upstream) {
      const answer = (await material(job, upstream, 'eth_getTransactionByHash', [txHash])) as TransactionJson | null;
      const blockHash = answer?.blockHash;
      if (answer === null || typeof answer !== 'object' || typeof blockHash !== 'string' || !HASH.test(blockHash)) {
        throw new MaterialError('eth_getTransactionByHash: no mined transaction (an unknown or pending one is not proven: asked by agreement)');
      }
      const agreed = await namedBlock(job, answer, 'transaction');
      mustProveAt(job, ['header'], agreed);
      const txs = await provenTransactions(job, upstream, agreed);
      const at = txs.findIndex((tx) => typeof tx.hash === 'string' && tx.hash.toLowerCase() === txHash);
      const proven = txs[at];
      if (proven === undefined) throw ProofError.mismatch('wrong-block', 'blockHash', 'the block holding the transaction', blockHash, 'the block named does not hold the transaction');
      checkSender(proven, `transactions[${at}]`, undefined, undefined, agreed);
      // The answer is the proven transaction, as the block holds it; a provider's answer that
      // differs from it in a field both have is charged.
      const differs = Object.keys(proven).find((key) => answer[key] !== undefined && JSON.stringify(answer[key]).toLowerCase() !== JSON.stringify(proven[key]).toLowerCase());
      if (differs !== undefined) chargeProof(job, upstream, `eth_getTransactionByHash answer: ${differs} differs from the proven transaction's`);
      return { result: proven, agreed };
    },
  };
}

/**
 * eth_getLogs over a range pinned by numbers (or one block by hash), proven complete: the top
 * header agreed, the ones below proven by parentHash from this provider, the blocks the blooms
 * let through proven by their receipts, the logs taken from them. The provider's own eth_getLogs
 * answer is compared: one that drops, adds or alters a log is charged, and the proven logs are
 * served either way. An answer that holds every proven log and differs only in numbering them
 * per transaction (logIndex 0 at each transaction's first log) is not charged: counted, logged
 * once per upstream.
 */
function logsRoute(filter: unknown): ProofRoute | undefined {
  if (filter === null || typeof filter !== 'object' || !readableFilter(filter as LogFilter)) return undefined;
  const f = filter as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown };
  let pin: BlockPin | undefined;
  let from: bigint | undefined;
  if (f.blockHash !== undefined) {
    pin = pinOf(f.blockHash);
    if (pin?.hash === undefined) return undefined;
  } else {
    const lo = pinOf(f.fromBlock);
    const hi = pinOf(f.toBlock);
    if (lo?.number === undefined || hi?.number === undefined || hi.number < lo.number || hi.number - lo.number >= BigInt(maxLogsRange)) return undefined;
    pin = hi;
    from = lo.number;
  }
  return {
    scopes: ['receipts', 'bloom', 'log-index', 'header'],
    pin,
    from,
    async prove(job, upstream, agreed) {
      const top = agreed!.header;
      const headers: ProvenHeader[] = from === undefined || from === top.number ? [top] : await rangeHeaders(job, upstream, agreed!, from);
      const receipts = new Map<string, BlockReceipts>();
      for (const h of blocksToFetch(headers, filter as LogFilter)) {
        const got = await material(job, upstream, 'eth_getBlockReceipts', [h.hash]);
        if (!Array.isArray(got)) throw new MaterialError('eth_getBlockReceipts: no receipts');
        // Each log's transactionHash from the block's proven transactions, not the receipt's label
        // (the receipts trie holds no hash).
        receipts.set(h.hash, { receipts: got as ReceiptJson[], transactionHashes: (await transactionsOf(job, upstream, h)).hashes });
      }
      const proven = await provenLogs(headers, filter as LogFilter, receipts);
      // The provider's own answer, compared: a lie about the logs is charged, the proven logs served.
      const asked = await ask(job, upstream, 'eth_getLogs', [filter]);
      if (asked.ok) {
        try {
          checkLogsAnswer(proven, asked.result as LogJson[]);
        } catch (err) {
          if (!(err instanceof ProofError)) throw err;
          // Every log there, as proven, numbered per transaction: not a lie (the proven numbering is served).
          if (err instanceof LogsProofError && numberedPerTransaction(proven, asked.result as LogJson[], err.diff, receipts)) notePerTxNumbering(job, upstream);
          else chargeProof(job, upstream, `eth_getLogs answer: ${err.message}`);
        }
      }
      return { result: proven, agreed: agreed! };
    },
  };
}

/**
 * Whether a filter's addresses and topics are what nodes take (an address or a list of them; at
 * most 4 topic positions, each null, a topic or a list of topics): a proof of anything else would
 * answer what no node does.
 */
function readableFilter(filter: LogFilter): boolean {
  const list = (v: unknown, each: (x: unknown) => boolean) => v === undefined || v === null || each(v) || (Array.isArray(v) && v.every(each));
  const topic = (v: unknown) => typeof v === 'string' && HASH.test(v);
  const topics = (filter as { topics?: unknown }).topics;
  if (topics !== undefined && topics !== null && (!Array.isArray(topics) || topics.length > 4 || !topics.every((t) => list(t, topic)))) return false;
  return list((filter as { address?: unknown }).address, isAddress);
}

/**
 * The proven headers of blocks from…top (lowest first): from the book when it holds every one
 * of them (final headers proven before), else the ones below the top from this provider in one
 * upstream batch, proven by parentHash and kept when final (vouched for by the top's quorum).
 */
async function rangeHeaders(job: ProofJob, upstream: Upstream, agreed: AgreedHeader, from: bigint): Promise<ProvenHeader[]> {
  const top = agreed.header;
  const kept: ProvenHeader[] = [];
  for (let n = from; n < top.number; n += 1n) {
    const hit = job.headers.get(job.chain, { number: n }, job.required);
    if (hit === undefined) break;
    kept.push(hit.header);
  }
  // A kept range serves only when it is the chain below this top, link by link.
  if (kept.length === Number(top.number - from) && linked([...kept, top])) return [...kept, top];
  const below = await headersBelow(job, upstream, from, top.number);
  const proven = checkHeaderChain(top, below);
  const byNumber = new Map(below.map((b) => [String(b.number).toLowerCase(), b]));
  // (In the book for proofs only: the cache of confirmed answers keeps agreed headers, not these.)
  for (const header of proven) job.headers.keepLinked(job.chain, { header, block: byNumber.get(`0x${header.number.toString(16)}`) ?? {}, members: agreed.members, required: agreed.required, linked: true });
  return [...proven, top];
}

/** Whether each header (lowest first) is the parent of the next. */
function linked(headers: readonly ProvenHeader[]): boolean {
  for (let i = 1; i < headers.length; i += 1) if (headers[i]!.parentHash !== headers[i - 1]!.hash) return false;
  return true;
}

/** The headers of blocks from…top-1, from one provider in one upstream batch. */
async function headersBelow(job: ProofJob, upstream: Upstream, from: bigint, top: bigint): Promise<BlockJson[]> {
  const calls = [];
  for (let n = from; n < top; n += 1n) calls.push({ jsonrpc: '2.0', id: calls.length + 1, method: 'eth_getBlockByNumber', params: [hexOf(n), false] });
  const payload = { calls: calls.map((c) => ({ id: c.id, method: c.method, params: c.params })), batch: true, raw: Buffer.from(JSON.stringify(calls)) };
  let body: Buffer;
  try {
    body = (await callOf(planFor(job, payload))(upstream, job.signal)).body;
  } catch (err) {
    throw new MaterialError(upstream.secrets.scrub(`headers: ${(err as Error).message}`));
  }
  job.bytes += body.length;
  let answers: { id: number; result?: BlockJson | null }[];
  try {
    answers = parseAnswer(body, 'headers') as typeof answers;
  } catch (err) {
    throw new MaterialError((err as Error).message);
  }
  if (!Array.isArray(answers)) throw new MaterialError('headers: the batch answer is not an array');
  const out: BlockJson[] = [];
  for (const a of answers) {
    if (a.result === null || typeof a.result !== 'object') throw new MaterialError(`headers: no block for call ${a.id}`);
    out.push(a.result!);
  }
  return out;
}
