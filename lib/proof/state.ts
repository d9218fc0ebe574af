/**
 * State proven against a header's `stateRoot`: the account proof of an eth_getProof answer
 * (keyed by keccak(address) in the state trie, its value `rlp([nonce, balance, storageHash,
 * codeHash])`), and each storage proof against the proven account's `storageHash` (keyed by
 * keccak(slot), its value the RLP of the slot's integer). The values the answer states must be
 * the values proven; from the proven account come the answers of eth_getBalance,
 * eth_getTransactionCount, eth_getStorageAt, and the check of an eth_getCode answer (its keccak is
 * the account's `codeHash`).
 *
 * Slots are 32-byte words: `storageKey` pads what a client sends to eth_getStorageAt (`0x0`,
 * `0x01`, a full word) to the 32 bytes every node accepts in eth_getProof (anvil refuses shorter
 * keys), and answers are matched to slots by that word, whatever form the node echoes the key in.
 */
import { RLP } from '@ethereumjs/rlp';
import { EMPTY_CODE_HASH, EMPTY_TRIE_ROOT, bytesBigint, dataBytes, keccak, quantity, quantityHex, sameHex, toHex } from './bytes.js';
import { ProofError } from './failure.js';
import type { ProvenHeader } from './header.js';
import { provenValue } from './trie.js';

/** An eth_getProof result as nodes send it. */
export interface AccountProofJson {
  readonly address: string;
  readonly accountProof: readonly string[];
  readonly balance: string;
  readonly nonce: string;
  readonly codeHash: string;
  readonly storageHash: string;
  readonly storageProof: readonly { readonly key: string; readonly value: string; readonly proof: readonly string[] }[];
}

/** An account proven against a header's stateRoot, with the slots whose proofs were checked. */
export interface ProvenAccount {
  readonly address: string;
  /** Whether the account exists in the state trie (an absent one has nonce 0, balance 0, no code, no storage). */
  readonly exists: boolean;
  readonly nonce: bigint;
  readonly balance: bigint;
  readonly storageHash: string;
  readonly codeHash: string;
  /** Proven slot values, by the slot's 32-byte word (`0x…` lower case). */
  readonly storage: ReadonlyMap<string, bigint>;
}

const ZERO_HASH = `0x${'00'.repeat(32)}`;

/** A storage slot as the 32-byte word eth_getProof is asked with (`0x0` → `0x000…000`). */
export function storageKey(slot: string, field = 'slot'): string {
  if (typeof slot !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(slot)) throw ProofError.malformed(field, slot, 'a slot of at most 32 bytes of hex');
  return `0x${slot.slice(2).toLowerCase().padStart(64, '0')}`;
}

function proofNodes(list: unknown, field: string): Uint8Array[] {
  if (!Array.isArray(list)) throw ProofError.malformed(field, list, 'a list of trie nodes');
  return list.map((n, i) => dataBytes(n, `${field}[${i}]`));
}

async function proven(root: string, key: Uint8Array, proof: Uint8Array[], reason: 'account-proof' | 'storage-proof', field: string, what: string): Promise<Uint8Array | null> {
  try {
    return await provenValue(dataBytes(root, 'root', 32), key, proof);
  } catch {
    throw new ProofError(`${field}: the proof does not lead from ${what} ${root}`, { reason, field, expected: root });
  }
}

function mismatch(field: string, provenValue: string, stated: unknown): ProofError {
  return ProofError.mismatch('value', field, provenValue, String(stated), 'not the proven value');
}

/**
 * Proves an eth_getProof answer against the header's stateRoot and returns the proven account.
 * `asked`, when given, is the request (address and slots): the answer must be about that address
 * and hold a proof for each slot. Throws a `ProofError`: `account-proof` / `storage-proof` (a
 * proof that does not lead from the root), `value` (a stated balance, nonce, codeHash,
 * storageHash or slot value that is not the proven one), `malformed`.
 */
export async function checkAccountProof(
  header: ProvenHeader,
  answer: AccountProofJson,
  asked?: { readonly address: string; readonly slots?: readonly string[] | undefined },
): Promise<ProvenAccount> {
  if (answer === null || typeof answer !== 'object') throw ProofError.malformed('result', answer, 'an eth_getProof result');
  const addressBytes = dataBytes(answer.address, 'address', 20);
  if (asked !== undefined && !sameHex(asked.address, answer.address)) throw mismatch('address', asked.address.toLowerCase(), answer.address);
  const value = await proven(header.stateRoot, addressBytes, proofNodes(answer.accountProof, 'accountProof'), 'account-proof', 'accountProof', 'the stateRoot');
  let nonce = 0n;
  let balance = 0n;
  let storageHash = EMPTY_TRIE_ROOT;
  let codeHash = EMPTY_CODE_HASH;
  if (value !== null) {
    const fields = RLP.decode(value) as Uint8Array[];
    if (!Array.isArray(fields) || fields.length !== 4) throw new ProofError('accountProof: the proven leaf is not an account', { reason: 'account-proof', field: 'accountProof' });
    nonce = bytesBigint(fields[0]!);
    balance = bytesBigint(fields[1]!);
    storageHash = toHex(fields[2]!);
    codeHash = toHex(fields[3]!);
  }
  if (quantity(answer.nonce, 'nonce') !== nonce) throw mismatch('nonce', quantityHex(nonce), answer.nonce);
  if (quantity(answer.balance, 'balance') !== balance) throw mismatch('balance', quantityHex(balance), answer.balance);
  // An absent account: nodes write its hashes as zero or as the empty values; both say the same.
  const sameOrAbsent = (stated: unknown, real: string, empty: string) =>
    typeof stated === 'string' && (sameHex(stated, real) || (value === null && (sameHex(stated, ZERO_HASH) || sameHex(stated, empty))));
  if (!sameOrAbsent(answer.storageHash, storageHash, EMPTY_TRIE_ROOT)) throw mismatch('storageHash', storageHash, answer.storageHash);
  if (!sameOrAbsent(answer.codeHash, codeHash, EMPTY_CODE_HASH)) throw mismatch('codeHash', codeHash, answer.codeHash);

  if (!Array.isArray(answer.storageProof)) throw ProofError.malformed('storageProof', answer.storageProof, 'a list of storage proofs');
  const storage = new Map<string, bigint>();
  for (const [i, item] of answer.storageProof.entries()) {
    const field = `storageProof[${i}]`;
    const slot = storageKey(item?.key, `${field}.key`);
    let slotValue = 0n;
    if (storageHash !== EMPTY_TRIE_ROOT) {
      const raw = await proven(storageHash, dataBytes(slot, `${field}.key`, 32), proofNodes(item.proof, `${field}.proof`), 'storage-proof', `${field}.proof`, "the account's storageHash");
      if (raw !== null) {
        const decoded = RLP.decode(raw);
        if (!(decoded instanceof Uint8Array)) throw new ProofError(`${field}.proof: the proven leaf is not a slot value`, { reason: 'storage-proof', field: `${field}.proof` });
        slotValue = bytesBigint(decoded);
      }
    }
    if (quantity(item.value, `${field}.value`) !== slotValue) throw mismatch(`${field}.value`, quantityHex(slotValue), item.value);
    storage.set(slot, slotValue);
  }
  for (const [i, s] of (asked?.slots ?? []).entries()) {
    const slot = storageKey(s, `slots[${i}]`);
    if (!storage.has(slot)) throw new ProofError(`storageProof: no proof of slot ${slot}, which was asked`, { reason: 'malformed', field: 'storageProof', expected: slot });
  }
  return { address: toHex(addressBytes), exists: value !== null, nonce, balance, storageHash, codeHash, storage };
}

/** eth_getBalance's answer for a proven account. */
export const balanceAnswer = (account: ProvenAccount): string => quantityHex(account.balance);
/** eth_getTransactionCount's answer for a proven account. */
export const transactionCountAnswer = (account: ProvenAccount): string => quantityHex(account.nonce);

/** eth_getStorageAt's answer (a 32-byte word) for a slot whose proof was checked. */
export function storageAnswer(account: ProvenAccount, slot: string): string {
  const key = storageKey(slot);
  const value = account.storage.get(key);
  if (value === undefined) throw new ProofError(`storageProof: slot ${key} was not proven`, { reason: 'malformed', field: 'storageProof', expected: key });
  return `0x${value.toString(16).padStart(64, '0')}`;
}

/** Checks an eth_getCode answer: its keccak must be the proven account's codeHash (no code: `0x`). */
export function checkCode(account: ProvenAccount, code: string): string {
  const bytes = dataBytes(code, 'result');
  const hash = toHex(keccak(bytes));
  if (hash !== account.codeHash) throw ProofError.mismatch('code-hash', 'result', account.codeHash, hash, "the code's keccak is not the account's codeHash");
  return toHex(bytes);
}

/**
 * Checks a provider's answer to a state read against the proven account: eth_getBalance,
 * eth_getTransactionCount, eth_getStorageAt (with its slot), eth_getCode. Returns the proven
 * answer; a different one is `value` (or `code-hash`).
 */
export function checkStateAnswer(method: 'eth_getBalance' | 'eth_getTransactionCount' | 'eth_getStorageAt' | 'eth_getCode', account: ProvenAccount, answer: unknown, slot?: string): string {
  if (method === 'eth_getCode') return checkCode(account, answer as string);
  if (method === 'eth_getStorageAt') {
    const word = storageAnswer(account, slot ?? '');
    const got = dataBytes(answer, 'result');
    if (got.length > 32 || bytesBigint(got) !== account.storage.get(storageKey(slot ?? ''))) throw mismatch('result', word, answer);
    return word;
  }
  const value = method === 'eth_getBalance' ? account.balance : account.nonce;
  if (quantity(answer, 'result') !== value) throw mismatch('result', quantityHex(value), answer);
  return quantityHex(value);
}
