/**
 * What cannot be trusted on a chain, by chain id: the known quirks that keep answers from being
 * proven the way this library proves them. Pure data. A chain with a quirk that covers every
 * proof (no Merkle-Patricia state, a block hash that is not the keccak of its header) is never
 * proven; a chain whose quirk covers some methods (blooms, receipts) is proven for the others. A
 * quirk may hold for the blocks before an upgrade only (`before`): the blocks from it on are
 * proven. A chain not listed here is not known to be provable: the caller decides it by a
 * self-check.
 */

/** What a quirk makes unprovable. */
export type QuirkScope =
  /** The block hash is not the keccak of an Ethereum header: nothing can be proven. */
  | 'header'
  /** No eth_getProof against a Merkle-Patricia stateRoot: state reads cannot be proven. */
  | 'state'
  /** The header's logsBloom cannot rule blocks out: eth_getLogs cannot be proven complete. */
  | 'bloom'
  /** Receipts outside the receiptsRoot: receipts (and logs) cannot be proven. */
  | 'receipts'
  /** Providers number logs per transaction, not per block: their eth_getLogs answers differ from the proven ones in logIndex. */
  | 'log-index';

/** The first block the quirk no longer holds for: by number, or by header timestamp (seconds) for a fork activated by time. */
export type QuirkCutoff = { readonly block: bigint; readonly timestamp?: undefined } | { readonly timestamp: bigint; readonly block?: undefined };

export interface ChainQuirk {
  readonly chainId: string;
  readonly name: string;
  readonly scopes: readonly QuirkScope[];
  /** Absent: the quirk holds for every block of the chain. */
  readonly before?: QuirkCutoff;
  readonly why: string;
}

/** The block a decision is about: its number, and its header timestamp when known (undefined: not known). */
export interface BlockMark {
  readonly number: bigint;
  readonly timestamp: bigint | undefined;
}

export const chainQuirks: readonly ChainQuirk[] = [
  { chainId: '324', name: 'zkSync Era', scopes: ['header', 'state'], why: 'its block hash is not the keccak of an Ethereum header, and its state is not a Merkle-Patricia trie (its eth_getProof is its own)' },
  { chainId: '1101', name: 'Polygon zkEVM', scopes: ['header', 'state'], why: 'block hashes of its own, state in a sparse Merkle tree: no Merkle-Patricia proofs' },
  {
    chainId: '534352',
    name: 'Scroll',
    scopes: ['state'],
    // Euclid phase 1, the fork that moved the state commitment from zkTrie to a Merkle-Patricia
    // trie, is activated by time: euclidTime 1744815600 (2025-04-16 15:00 UTC) in Scroll mainnet's
    // genesis config, per l2geth's release scroll-v5.8.33
    // (https://github.com/scroll-tech/go-ethereum/releases/tag/scroll-v5.8.33) and
    // https://docs.scroll.io/en/technology/overview/scroll-upgrades/galileo-upgrade (genesis.json).
    before: { timestamp: 1_744_815_600n },
    why: 'before its Euclid upgrade the state is a zkTrie (Poseidon): eth_getProof does not prove against stateRoot with a Merkle-Patricia check',
  },
  {
    chainId: '137',
    name: 'Polygon PoS',
    scopes: ['receipts', 'bloom'],
    // Madhugiri on mainnet at block 80084800: bor's release v2.5.0
    // (https://github.com/0xPolygon/bor/releases/tag/v2.5.0, PIP-74: state-sync transactions
    // included in the block) and 0xPolygon/erigon's release v3.3.0, both "block 80084800".
    before: { block: 80_084_800n },
    why: 'state-sync receipts were outside receiptsRoot (and their logs in the bloom) before the Madhugiri upgrade: a block\'s receipts as served do not rebuild its root',
  },
  // No activation block for Monad's bloom fix was found in its release notes or node code: the
  // quirk holds for the whole chain until one is known (a wrong cut-off would trust a bloom that lies).
  { chainId: '143', name: 'Monad', scopes: ['bloom'], why: 'the logsBloom of early blocks cannot be trusted to rule a filter out (the block the fix took effect is not known here: every block goes by agreement)' },
  {
    chainId: '25',
    name: 'Cronos',
    scopes: ['bloom'],
    // Blocks before the v0.7.0 upgrade at height 2693800 (Ethermint's bloom counted the logs of
    // failed transactions): cronos's fix-unlucky-tx command (its flag "The block height v0.7.0
    // upgrade executed", 2693800),
    // https://docs.cronos.org/for-node-hosts/running-nodes/cronos-mainnet/patching-unlucky-tx and
    // subsquid/squid-sdk pull request 460. The upgrade block itself is kept under the quirk: a
    // bloom errs on the side of the quirk.
    before: { block: 2_693_801n },
    why: 'the logsBloom of blocks before the v0.7.0 upgrade cannot be trusted to rule a filter out',
  },
  { chainId: '728126428', name: 'TRON', scopes: ['header', 'state'], why: 'its block hash begins with the block number and is not the keccak of the fields served' },
];

const byId = new Map(chainQuirks.map((q) => [q.chainId, q]));

/** The chain's quirk, if it has one (chain id in decimal). */
export const quirkOf = (chainId: string): ChainQuirk | undefined => byId.get(chainId);

/** Whether the cut-off lies after the block (the block is under the quirk); a time cut-off and a block whose time is not known: under it. */
function before(cutoff: QuirkCutoff, block: BlockMark): boolean {
  if (cutoff.block !== undefined) return block.number < cutoff.block;
  return block.timestamp === undefined || block.timestamp < cutoff.timestamp;
}

/**
 * Whether a quirk of the chain makes `scope` unprovable at `block`. Without a block: whether it
 * does at every block (a quirk with no cut-off). A range of blocks is under the quirk when its
 * lowest block is (every cut-off is a "before": the blocks after the lowest are later).
 */
export function quirkBlocks(chainId: string, scope: QuirkScope, block?: BlockMark): boolean {
  const quirk = byId.get(chainId);
  if (quirk === undefined || !quirk.scopes.includes(scope)) return false;
  if (quirk.before === undefined) return true;
  return block === undefined ? false : before(quirk.before, block);
}

/** The cut-off of a quirk in words: "block 80084800", "time 1744815600 (2025-04-16T15:00:00Z)". */
export function describeCutoff(cutoff: QuirkCutoff): string {
  return cutoff.block !== undefined ? `block ${cutoff.block}` : `time ${cutoff.timestamp} (${new Date(Number(cutoff.timestamp) * 1000).toISOString().replace('.000Z', 'Z')})`;
}
