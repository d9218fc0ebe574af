/**
 * The Merkle-Patricia tries of this room, through `@ethereumjs/mpt`: the root of an ordered list
 * (a block's receipts or transactions, keyed by the RLP of their index), and a value read through
 * an EIP-1186 proof against a root (account and storage proofs, keys hashed). The library is
 * loaded on first use, not when the package is imported: a gateway that proves nothing does not
 * load it.
 */
import { RLP } from '@ethereumjs/rlp';
import { toHex } from './bytes.js';

type Mpt = typeof import('@ethereumjs/mpt');
let loading: Promise<Mpt> | undefined;
const mpt = (): Promise<Mpt> => (loading ??= import('@ethereumjs/mpt'));

/** The root of the trie mapping `rlp(i)` to `values[i]`. */
export async function orderedTrieRoot(values: readonly Uint8Array[]): Promise<string> {
  const { MerklePatriciaTrie } = await mpt();
  const trie = new MerklePatriciaTrie();
  for (const [i, value] of values.entries()) await trie.put(RLP.encode(i), value);
  return toHex(trie.root());
}

/**
 * The value at `key` (keccak-hashed, as the state and storage tries key it) proven by `proof`
 * against `root`: the value's bytes, or null when the proof proves the key absent. Throws when the
 * proof does not lead from the root (a node missing, or one of another trie).
 */
export async function provenValue(root: Uint8Array, key: Uint8Array, proof: readonly Uint8Array[]): Promise<Uint8Array | null> {
  const { verifyMerkleProof } = await mpt();
  return verifyMerkleProof(key, proof as Uint8Array[], { root, useKeyHashing: true });
}
