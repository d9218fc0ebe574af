/**
 * The statement an attestation signs, and its one byte encoding. The signed bytes are the UTF-8
 * of the statement's canonical JSON: keys sorted by UTF-16 code units at every level, no
 * whitespace, strings escaped as JSON.stringify escapes them, integers in decimal (the same text
 * json-stable-stringify writes). Every field is always present (null when unknown), so a verifier
 * in any language rebuilds the bytes from the fields alone (lib/attest/README.md gives the format
 * byte by byte and a test vector).
 */
import stringify from 'json-stable-stringify';
import { canonicalJson, sha256Hex } from '../verify/answers/canonical.js';

/** The value of `format`: the statement's layout and version. A verifier refuses any other. */
export const statementFormat = 'omnigate.attestation/1';

export interface Statement {
  /** The layout and version: statementFormat. */
  format: typeof statementFormat;
  /** The chain id, decimal, as in the request path. */
  chain: string;
  /** The JSON-RPC method of the call. */
  method: string;
  /** attestationRequestHash(method, params): SHA-256 hex of the question, not of the client's id. */
  request: string;
  /**
   * The block the answer is about: its number (0x-hex) and hash, each null when the request does
   * not name it and no proof gave it (a number pin: hash null; a hash pin: number null).
   */
  block: { number: string | null; hash: string | null };
  /** What vouches for the answer: N agreeing providers, or a proof against an agreed header. */
  verifiedBy: 'agreement' | 'proof';
  /** The N the request asked for. */
  required: number;
  /** The providers whose answers agreed (the redacted ids X-Checked-URLS shows; never a URL with its key). */
  quorum: string[];
  /** The answer's X-Json-Hash (for a batch member: the member's own). */
  answer: string;
  /** The batch member's index in the answer array; null for a single call. */
  member: number | null;
  /** When it was signed, seconds since 1970-01-01 UTC. */
  signedAt: number;
  /** The id of the signing key (X-Attestation-Key). */
  keyId: string;
}

/** The bytes that are signed: the statement's canonical JSON, UTF-8. */
export function encodeStatement(statement: Statement): Buffer {
  return Buffer.from(canonicalJson(statement), 'utf8');
}

/**
 * The question an attestation is about: SHA-256 (hex) of the method, a line feed, and the params
 * as canonical JSON (keys sorted, no whitespace; `[]` when absent). The client's id is not part
 * of it. For a `safe`/`finalized` tag or the finalized route, the params are those asked of the
 * upstreams: the tag resolved to the block number the statement names.
 */
export function attestationRequestHash(method: string, params: readonly unknown[] = []): string {
  return sha256Hex(`${method}\n${stringify(params) ?? '[]'}`);
}

const hex = /^0x[0-9a-f]*$/;
const sha256 = /^[0-9a-f]{64}$/;

/**
 * The statement in the bytes, or why they are not one: JSON, the known format, every field of the
 * right type, no other field, and written canonically (re-encoding gives the same bytes).
 */
export function decodeStatement(bytes: Buffer): { statement: Statement } | { reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { reason: 'the statement is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { reason: 'the statement is not a JSON object' };
  const s = value as Record<string, unknown>;
  if (s.format !== statementFormat) return { reason: `the statement's format is ${JSON.stringify(s.format)}, not ${statementFormat}` };
  const block = s.block as Record<string, unknown> | null;
  const problems: [boolean, string][] = [
    [typeof s.chain === 'string' && /^[1-9][0-9]*$/.test(s.chain), 'chain'],
    [typeof s.method === 'string' && s.method.length > 0, 'method'],
    [typeof s.request === 'string' && sha256.test(s.request), 'request'],
    [typeof block === 'object' && block !== null && !Array.isArray(block) && Object.keys(block).length === 2
      && (block.number === null || (typeof block.number === 'string' && hex.test(block.number)))
      && (block.hash === null || (typeof block.hash === 'string' && hex.test(block.hash))), 'block'],
    [s.verifiedBy === 'agreement' || s.verifiedBy === 'proof', 'verifiedBy'],
    [Number.isSafeInteger(s.required) && (s.required as number) >= 1, 'required'],
    [Array.isArray(s.quorum) && s.quorum.every((q) => typeof q === 'string'), 'quorum'],
    [typeof s.answer === 'string' && sha256.test(s.answer), 'answer'],
    [s.member === null || (Number.isSafeInteger(s.member) && (s.member as number) >= 0), 'member'],
    [Number.isSafeInteger(s.signedAt) && (s.signedAt as number) >= 0, 'signedAt'],
    [typeof s.keyId === 'string' && s.keyId.length > 0, 'keyId'],
  ];
  const bad = problems.find(([ok]) => !ok);
  if (bad) return { reason: `the statement's ${bad[1]} is missing or malformed` };
  const statement = s as unknown as Statement;
  if (Object.keys(s).length !== problems.length + 1) return { reason: 'the statement has fields this format does not define' };
  if (!encodeStatement(statement).equals(bytes)) return { reason: 'the statement is not in its canonical form' };
  return { statement };
}
