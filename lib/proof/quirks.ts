/**
 * What cannot be trusted on a chain, by chain id: the known quirks that keep answers from being
 * proven the way this library proves them. Pure data. A chain with a quirk that covers every
 * proof (no Merkle-Patricia state, a block hash that is not the keccak of its header) is never
 * proven; a chain whose quirk covers some methods (blooms, receipts) is proven for the others. A
 * chain not listed here is not known to be provable: the caller decides it by a self-check.
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

export interface ChainQuirk {
  readonly chainId: string;
  readonly name: string;
  readonly scopes: readonly QuirkScope[];
  readonly why: string;
}

export const chainQuirks: readonly ChainQuirk[] = [
  { chainId: '324', name: 'zkSync Era', scopes: ['header', 'state'], why: 'its block hash is not the keccak of an Ethereum header, and its state is not a Merkle-Patricia trie (its eth_getProof is its own)' },
  { chainId: '1101', name: 'Polygon zkEVM', scopes: ['header', 'state'], why: 'block hashes of its own, state in a sparse Merkle tree: no Merkle-Patricia proofs' },
  { chainId: '534352', name: 'Scroll', scopes: ['state'], why: 'before its Euclid upgrade the state is a zkTrie (Poseidon): eth_getProof does not prove against stateRoot with a Merkle-Patricia check' },
  { chainId: '137', name: 'Polygon PoS', scopes: ['receipts', 'bloom'], why: 'state-sync receipts were outside receiptsRoot before the Madhugiri upgrade: a block\'s receipts as served do not rebuild its root' },
  { chainId: '143', name: 'Monad', scopes: ['bloom'], why: 'the logsBloom of early blocks cannot be trusted to rule a filter out' },
  { chainId: '25', name: 'Cronos', scopes: ['bloom'], why: 'the logsBloom of old blocks cannot be trusted to rule a filter out' },
  { chainId: '728126428', name: 'TRON', scopes: ['header', 'state'], why: 'its block hash begins with the block number and is not the keccak of the fields served' },
];

const byId = new Map(chainQuirks.map((q) => [q.chainId, q]));

/** The chain's quirk, if it has one (chain id in decimal). */
export const quirkOf = (chainId: string): ChainQuirk | undefined => byId.get(chainId);

/** Whether a quirk of the chain makes `scope` unprovable. */
export const quirkBlocks = (chainId: string, scope: QuirkScope): boolean => byId.get(chainId)?.scopes.includes(scope) ?? false;
