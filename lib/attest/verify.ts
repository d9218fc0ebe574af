/**
 * Checking an attestation: the Ed25519 signature over the statement's bytes, the statement's
 * format, and optionally the answer (its X-Json-Hash recomputed from the body the client got) and
 * fields the caller expects. Pure: the caller reads keys and bodies.
 */
import { verify, type KeyObject } from 'node:crypto';
import { readJson } from '../verify/answers/answers.js';
import { canonicalForm, sha256Hex, type Answer } from '../verify/answers/canonical.js';
import type { IgnoredFields } from '../verify/answers/compared-fields.js';
import { publicKeyForms, publicKeyOf } from './keys.js';
import { decodeStatement, type Statement } from './statement.js';

export interface VerifyAttestationOptions {
  /**
   * The answer's body as received (a single call's object, or a batch's array, whose element
   * `member` is checked): its hash is recomputed as X-Json-Hash is and must equal `answer`.
   */
  answerBody?: string | Buffer;
  /** Fields the statement must hold, e.g. `{ chain: '1', request: attestationRequestHash(method, params) }`. */
  expect?: Partial<Pick<Statement, 'chain' | 'method' | 'request' | 'verifiedBy' | 'keyId' | 'answer' | 'member'>> & { minRequired?: number };
  /** The gateway's ignored fields for the chain, when its config adds some (default: defaultIgnoredFields). */
  ignored?: IgnoredFields;
}

export type AttestationCheck = { valid: true; statement: Statement } | { valid: false; reason: string; statement?: Statement };

/**
 * Checks one attestation (`<payload>.<signature>`, each base64url, as in X-Attestation; a batch's
 * header holds several, comma-separated: check each). `publicKey`: a KeyObject, or its text (PEM,
 * or the 32 raw bytes in hex or base64).
 */
export function verifyAttestation(attestation: string, publicKey: KeyObject | string, options: VerifyAttestationOptions = {}): AttestationCheck {
  const key = typeof publicKey === 'string' ? publicKeyOf(publicKey) : publicKey;
  if (!key || key.asymmetricKeyType !== 'ed25519') return { valid: false, reason: `the key is not ${publicKeyForms}` };
  const parts = attestation.trim().split('.');
  const b64 = /^[A-Za-z0-9_-]+$/;
  if (parts.length !== 2 || !b64.test(parts[0]!) || !b64.test(parts[1]!)) {
    return { valid: false, reason: 'not an attestation: expected <statement>.<signature>, each base64url' };
  }
  const bytes = Buffer.from(parts[0]!, 'base64url');
  const signature = Buffer.from(parts[1]!, 'base64url');
  if (signature.length !== 64) return { valid: false, reason: 'the signature is not 64 bytes (Ed25519)' };
  let signed: boolean;
  try {
    signed = verify(null, bytes, key, signature);
  } catch {
    signed = false;
  }
  if (!signed) return { valid: false, reason: 'the signature does not match the statement and this key (altered statement, or another key)' };
  const decoded = decodeStatement(bytes);
  if ('reason' in decoded) return { valid: false, reason: decoded.reason };
  const { statement } = decoded;
  const expect = options.expect ?? {};
  for (const field of ['chain', 'method', 'request', 'verifiedBy', 'keyId', 'answer', 'member'] as const) {
    if (expect[field] !== undefined && expect[field] !== statement[field]) {
      return { valid: false, reason: `the statement's ${field} is ${JSON.stringify(statement[field])}, expected ${JSON.stringify(expect[field])}`, statement };
    }
  }
  if (expect.minRequired !== undefined && statement.required < expect.minRequired) {
    return { valid: false, reason: `the statement vouches for N=${statement.required}, fewer than ${expect.minRequired}`, statement };
  }
  if (options.answerBody !== undefined) {
    const hash = answerHash(options.answerBody, statement, options.ignored);
    if ('reason' in hash) return { valid: false, reason: hash.reason, statement };
    if (hash.hash !== statement.answer) {
      return { valid: false, reason: `the answer's hash is ${hash.hash}, the statement signs ${statement.answer}: the body is not the answer attested`, statement };
    }
  }
  return { valid: true, statement };
}

/** The X-Json-Hash of the answer the statement is about, recomputed from the body (lib/verify/README.md "Recomputing X-Json-Hash"). */
function answerHash(body: string | Buffer, statement: Statement, ignored: IgnoredFields | undefined): { hash: string } | { reason: string } {
  const read = readJson(typeof body === 'string' ? body : body.toString('utf8'));
  if ('reason' in read) return { reason: `the body is not a JSON answer: ${read.reason}` };
  let answer: unknown = read.value;
  if (statement.member !== null) {
    if (!Array.isArray(answer)) return { reason: 'the statement is about a batch member, and the body is not an array' };
    answer = answer[statement.member];
  }
  if (typeof answer !== 'object' || answer === null || !('result' in answer || 'error' in answer)) {
    return { reason: `the body${statement.member !== null ? `'s element ${statement.member}` : ''} is not a JSON-RPC answer (no result nor error)` };
  }
  return { hash: sha256Hex(canonicalForm(statement.method, answer as Answer, ignored ? { ignored } : {})) };
}
