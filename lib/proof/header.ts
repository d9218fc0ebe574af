/**
 * Block headers proven from their fields: the header's RLP rebuilt from the JSON of
 * eth_getBlockByNumber / eth_getBlockByHash (transactions as hashes or objects, either), its
 * keccak compared with `hash`, and ranges proven from one agreed header down the `parentHash`
 * chain. Once N providers agree on a hash that is the keccak of the fields, they agree on every
 * field: the roots the other proofs of this room are checked against.
 *
 * Which fork's layout a header has is read from which fields are present, never from the chain or
 * the block number: the fields of each fork follow the fifteen of the original header in a fixed
 * order (London: `baseFeePerGas`; Shanghai: `withdrawalsRoot`; Cancun: `blobGasUsed`,
 * `excessBlobGas`, `parentBeaconBlockRoot`; Prague: `requestsHash`). The fields present are hashed
 * in that order; a header of a real fork has a prefix of the list, but a node built on alloy
 * (anvil with `--hardfork` before Cancun) also writes and hashes `blobGasUsed` and `excessBlobGas`
 * on a header without `withdrawalsRoot`, and such a header (layout `gapped`) is hashed as the node
 * hashes it: the present fields in order, the absent ones left out. OP Stack and Arbitrum headers are hashed the same way (Arbitrum keeps
 * its own data in `extraData`, `mixHash` and `nonce`, which are hashed as such); chains whose hash
 * is not the keccak of this RLP are in the room's README.
 */
import { RLP } from '@ethereumjs/rlp';
import { dataBytes, keccak, quantity, quantityBytes, sameHex, toHex } from './bytes.js';
import { ProofError } from './failure.js';

/** A block as eth_getBlockBy* returns it (only the header's fields are read). */
export type BlockJson = Readonly<Record<string, unknown>>;

/** The header layouts, named after the fork that introduced each. */
export type HeaderLayout = 'frontier' | 'london' | 'shanghai' | 'cancun' | 'prague' | 'gapped';

/** A header whose hash was recomputed from its fields: the roots every other proof is checked against. */
export interface ProvenHeader {
  readonly hash: string;
  readonly number: bigint;
  readonly timestamp: bigint;
  readonly parentHash: string;
  readonly stateRoot: string;
  readonly transactionsRoot: string;
  readonly receiptsRoot: string;
  readonly logsBloom: string;
  readonly layout: HeaderLayout;
}

type Kind = 'hash' | 'address' | 'bloom' | 'nonce' | 'quantity' | 'data';

/** The fifteen fields every header has, in RLP order. */
const BASE: readonly (readonly [string, Kind])[] = [
  ['parentHash', 'hash'],
  ['sha3Uncles', 'hash'],
  ['miner', 'address'],
  ['stateRoot', 'hash'],
  ['transactionsRoot', 'hash'],
  ['receiptsRoot', 'hash'],
  ['logsBloom', 'bloom'],
  ['difficulty', 'quantity'],
  ['number', 'quantity'],
  ['gasLimit', 'quantity'],
  ['gasUsed', 'quantity'],
  ['timestamp', 'quantity'],
  ['extraData', 'data'],
  ['mixHash', 'hash'],
  ['nonce', 'nonce'],
];

/** The fields later forks appended, in RLP order, with the layout each completes. */
const APPENDED: readonly (readonly [string, Kind, HeaderLayout | undefined])[] = [
  ['baseFeePerGas', 'quantity', 'london'],
  ['withdrawalsRoot', 'hash', 'shanghai'],
  ['blobGasUsed', 'quantity', undefined],
  ['excessBlobGas', 'quantity', undefined],
  ['parentBeaconBlockRoot', 'hash', 'cancun'],
  ['requestsHash', 'hash', 'prague'],
];

/** Fields of a block's JSON that are not header fields, or are another chain's extras not in its hash. */
const NOT_HASHED = new Set([
  'hash', 'size', 'totalDifficulty', 'transactions', 'uncles', 'withdrawals', 'sealFields', 'author',
  // Arbitrum: copies of what its extraData, mixHash and nonce hold
  'l1BlockNumber', 'sendCount', 'sendRoot',
]);
const KNOWN = new Set([...BASE.map(([f]) => f), ...APPENDED.map(([f]) => f), ...NOT_HASHED]);

const absent = (v: unknown) => v === undefined || v === null;

function encodeField(block: BlockJson, field: string, kind: Kind): Uint8Array {
  const v = block[field];
  switch (kind) {
    case 'hash': return dataBytes(v, field, 32);
    case 'address': return dataBytes(v, field, 20);
    case 'bloom': return dataBytes(v, field, 256);
    case 'nonce': return dataBytes(v, field, 8);
    case 'quantity': return quantityBytes(v, field);
    case 'data': return dataBytes(v, field);
  }
}

/** The layout of a header, from which appended fields it has: a fork's name, or `gapped` when a field is present after an absent one. */
export function headerLayout(block: BlockJson): HeaderLayout {
  let layout: HeaderLayout = 'frontier';
  let gap = false;
  for (const [field, , completes] of APPENDED) {
    if (absent(block[field])) {
      gap = true;
      continue;
    }
    if (gap) return 'gapped';
    if (completes !== undefined) layout = completes;
  }
  return layout;
}

/** The header's RLP, rebuilt from the block's JSON fields. */
export function headerRlp(block: BlockJson): Uint8Array {
  if (block === null || typeof block !== 'object') throw ProofError.malformed('block', block, 'a block object');
  const items: Uint8Array[] = [];
  for (const [field, kind] of BASE) items.push(encodeField(block, field, kind));
  for (const [field, kind] of APPENDED) if (!absent(block[field])) items.push(encodeField(block, field, kind));
  return RLP.encode(items);
}

/** The block hash recomputed from the header's fields (keccak-256 of its RLP), `0x…` lower case. */
export function headerHash(block: BlockJson): string {
  return toHex(keccak(headerRlp(block)));
}

/**
 * Checks that the block's `hash` is the keccak of its fields (and, when given, equals the agreed
 * hash); returns the proven header. Throws a `ProofError`: `header-hash` when a field was
 * altered, naming the fields outside the known layouts if the block has any.
 */
export function checkHeader(block: BlockJson, agreedHash?: string): ProvenHeader {
  const recomputed = headerHash(block);
  const stated = block.hash;
  if (typeof stated !== 'string' || !sameHex(stated, recomputed)) {
    const extra = Object.keys(block).filter((k) => !KNOWN.has(k));
    const note = extra.length === 0 ? 'a field differs from the one hashed' : `a field differs, or the chain hashes fields outside the known layouts (${extra.join(', ')})`;
    throw ProofError.mismatch('header-hash', 'hash', recomputed, String(stated), `the keccak of the header's fields (${note})`);
  }
  if (agreedHash !== undefined && !sameHex(agreedHash, recomputed)) {
    throw ProofError.mismatch('header-hash', 'hash', agreedHash.toLowerCase(), recomputed, 'not the agreed header');
  }
  return proven(block, recomputed);
}

function proven(block: BlockJson, hash: string): ProvenHeader {
  return {
    hash,
    number: quantity(block.number, 'number'),
    timestamp: quantity(block.timestamp, 'timestamp'),
    parentHash: (block.parentHash as string).toLowerCase(),
    stateRoot: (block.stateRoot as string).toLowerCase(),
    transactionsRoot: (block.transactionsRoot as string).toLowerCase(),
    receiptsRoot: (block.receiptsRoot as string).toLowerCase(),
    logsBloom: (block.logsBloom as string).toLowerCase(),
    layout: headerLayout(block),
  };
}

/**
 * Proves the headers below an agreed one by the `parentHash` chain: `below` must be the blocks
 * `top.number - below.length` … `top.number - 1` (in any order), each the parent of the next.
 * Returns them proven, lowest first (the top not included). A gap, a duplicate or a header that
 * is not its child's parent is `parent-hash`, naming the block.
 */
export function checkHeaderChain(top: ProvenHeader, below: readonly BlockJson[]): ProvenHeader[] {
  const byNumber = new Map<bigint, BlockJson>();
  for (const [i, block] of below.entries()) {
    const n = quantity(block?.number, `headers[${i}].number`);
    if (byNumber.has(n)) throw new ProofError(`headers: block ${n} appears twice`, { reason: 'parent-hash', field: `headers[${i}].number` });
    byNumber.set(n, block);
  }
  const out: ProvenHeader[] = new Array(below.length);
  let child = top;
  for (let k = below.length - 1; k >= 0; k -= 1) {
    const n = child.number - 1n;
    const block = byNumber.get(n);
    if (block === undefined) throw new ProofError(`headers: block ${n} (the parent of ${child.number}) is missing`, { reason: 'parent-hash', field: 'headers' });
    const hash = headerHash(block);
    if (hash !== child.parentHash) {
      throw ProofError.mismatch('parent-hash', `headers[block ${n}]`, child.parentHash, hash, `the keccak of block ${n}'s fields is not block ${child.number}'s parentHash`);
    }
    child = proven(block, hash);
    out[k] = child;
  }
  return out;
}
