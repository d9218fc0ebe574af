/**
 * Why a proof failed, precisely: one `ProofError` per failure, with a stable `reason` (for
 * programs, metrics and the later charging of the provider), the JSON `field` that failed (a path
 * into the answer, e.g. `receipts[2].logs[0].data` or `accountProof`), what the proof expected and
 * what the answer held. The message says all of it in one line. No secret can be in it: it quotes
 * only the answers' fields, never a provider's URL.
 */

/** The kinds of failure. */
export type ProofReason =
  /** A field is missing or not of its type (hex data of the wrong length, a quantity that is not one). */
  | 'malformed'
  /** The hash recomputed from the header's fields differs from its `hash` (or from the agreed hash). */
  | 'header-hash'
  /** A header of a range is not the parent of the one above it. */
  | 'parent-hash'
  /** The root recomputed from the receipts differs from the header's `receiptsRoot`. */
  | 'receipts-root'
  /** The root recomputed from the transactions differs from the header's `transactionsRoot`. */
  | 'transactions-root'
  /** The bloom recomputed from the logs differs from the one given (a receipt's or the block's). */
  | 'logs-bloom'
  /** An answer is about another block or transaction than the one asked (hash, number, index). */
  | 'wrong-block'
  /** A provider's eth_getLogs answer differs from the logs proven from the receipts. */
  | 'logs'
  /** The account proof does not prove the account against the header's `stateRoot`. */
  | 'account-proof'
  /** A storage proof does not prove the slot against the account's `storageHash`. */
  | 'storage-proof'
  /** The code's keccak differs from the proven account's `codeHash`. */
  | 'code-hash'
  /** A value the answer states differs from the value the proof proves. */
  | 'value'
  /** A transaction type, receipt type or layout this library cannot encode. */
  | 'unsupported';

export interface ProofErrorInit {
  reason: ProofReason;
  /** Path of the field that failed, in the answer as the node sent it. */
  field: string;
  /** What the proof expected there (a hash, a root, a value), when there is one. */
  expected?: string | undefined;
  /** What the answer held there, when there is one. */
  actual?: string | undefined;
}

export class ProofError extends Error {
  readonly reason: ProofReason;
  readonly field: string;
  readonly expected: string | undefined;
  readonly actual: string | undefined;

  constructor(message: string, init: ProofErrorInit) {
    super(message);
    this.name = 'ProofError';
    this.reason = init.reason;
    this.field = init.field;
    this.expected = init.expected;
    this.actual = init.actual;
  }

  /** A field that is not what its type says. */
  static malformed(field: string, value: unknown, wanted: string): ProofError {
    const shown = typeof value === 'string' ? (value.length > 80 ? `${value.slice(0, 77)}…` : value) : value === undefined ? 'nothing' : typeof value;
    return new ProofError(`${field}: expected ${wanted}, got ${shown}`, { reason: 'malformed', field, actual: typeof value === 'string' ? value : undefined });
  }

  /** `field` holds `actual` where the proof gives `expected`. */
  static mismatch(reason: ProofReason, field: string, expected: string, actual: string, what: string): ProofError {
    return new ProofError(`${field}: ${what}: expected ${expected}, the answer has ${actual}`, { reason, field, expected, actual });
  }
}
