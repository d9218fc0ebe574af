/**
 * The signer of a pipeline: built once from the `attest:` section (the key parsed once into a
 * KeyObject), it turns a confirmed answer into the X-Attestation value
 * `base64url(statement bytes).base64url(Ed25519 signature)`. The emit stage calls it for
 * confirmed answers only; without `attest:` there is no signer and no work.
 */
import { sign, type KeyObject } from 'node:crypto';
import { ConfigError } from '../errors.js';
import { KeyFileError, readKeyFileSync } from '../keyfile.js';
import { pinOf } from '../jsonrpc/classify.js';
import type { RpcContext } from '../pipeline/context.js';
import type { Verdict } from '../verify/question.js';
import type { AttestConfig } from '../../config/types.js';
import { defaultKeyId, privateKeyForms, privateKeyOf } from './keys.js';
import { attestationRequestHash, encodeStatement, statementFormat, type Statement } from './statement.js';

/**
 * What the proof stage records on a request it proved (ctx.proof): how the answer was verified
 * and the agreed header it was proven against. Read here only; absent: agreement.
 */
export interface ProofNote {
  verifiedBy: 'proof' | 'agreement';
  headerHash?: string | null;
  blockNumber?: bigint | number | string | null;
}

export interface Attester {
  readonly keyId: string;
  /** The X-Attestation value of one confirmed answer (`member`: its index in a batch's array, else null); undefined for a chain not signed. */
  attest(ctx: RpcContext, verdict: Verdict, member: number | null): string | undefined;
}

/** Most bytes of a batch's X-Attestation (a header block above 16 KiB is refused by Node's clients). */
export const attestationMaxBytes = 8192;

/**
 * The signing key of an `attest:` section: `key`, else `keyFile` read now. A keyFile that cannot
 * be read or holds no key is a ConfigError naming `attest.keyFile`, never its content. A cluster's
 * primary reads it once for every worker (lib/server/cluster.ts PinnedConfig).
 */
export function attestKeyOf(config: AttestConfig, readFile: (path: string) => string = readKeyFileSync): KeyObject {
  if (config.key !== undefined) return config.key;
  if (config.keyFile === undefined) throw new ConfigError(['attest: has neither key nor keyFile']);
  let text: string;
  try {
    text = readFile(config.keyFile);
  } catch (err) {
    throw new ConfigError([`attest.keyFile: cannot read ${config.keyFile}: ${err instanceof KeyFileError ? err.reason : ((err as NodeJS.ErrnoException).code ?? 'error')}`]);
  }
  const key = privateKeyOf(text);
  if (!key) throw new ConfigError([`attest.keyFile: ${config.keyFile} does not hold ${privateKeyForms} (its content is not shown)`]);
  return key;
}

/** The section signing with the key given (a cluster's worker: its primary's read of keyFile, as PKCS#8 PEM), no file read. */
export function withPinnedKey(config: AttestConfig, pem: string): AttestConfig {
  const key = privateKeyOf(pem);
  if (!key) throw new ConfigError(['attest: the key the cluster\'s primary gave holds no key']);
  const { keyFile: _read, ...rest } = config;
  return { ...rest, key };
}

/** The signer of an `attest:` section (its key as attestKeyOf reads it). */
export function createAttester(config: AttestConfig, options: { readFile?: (path: string) => string; now?: () => number } = {}): Attester {
  const signingKey = attestKeyOf(config, options.readFile);
  const keyId = config.keyId ?? defaultKeyId(signingKey);
  const chains = config.chains ? new Set(config.chains) : undefined;
  const now = options.now ?? Date.now;
  return {
    keyId,
    attest(ctx, verdict, member) {
      const chain = ctx.chain;
      const call = ctx.payload?.calls[0];
      if (!chain || !call || (chains && !chains.has(chain.id))) return undefined;
      const statement: Statement = {
        format: statementFormat,
        chain: chain.id,
        method: call.method,
        request: attestationRequestHash(call.method, call.params),
        block: { number: null, hash: null },
        verifiedBy: 'agreement',
        required: ctx.required ?? 1,
        quorum: verdict.members.map(labelOf),
        answer: verdict.hash,
        member,
        signedAt: Math.floor(now() / 1000),
        keyId,
      };
      const proof = (ctx as { proof?: ProofNote }).proof;
      if (proof) {
        statement.verifiedBy = proof.verifiedBy === 'proof' ? 'proof' : 'agreement';
        statement.block.number = quantity(proof.blockNumber);
        statement.block.hash = typeof proof.headerHash === 'string' ? proof.headerHash.toLowerCase() : null;
      }
      if (statement.block.number === null && statement.block.hash === null) {
        const pin = pinOf(call, chain.extraConfirmable);
        if (pin.kind === 'number') statement.block.number = `0x${pin.block.toString(16)}`;
        else if (pin.kind === 'blockHash') statement.block.hash = pin.hash.toLowerCase();
      }
      const bytes = encodeStatement(statement);
      return `${bytes.toString('base64url')}.${sign(null, bytes, signingKey).toString('base64url')}`;
    },
  };
}

/** An agreeing member's upstream by its redacted URL, as X-Checked-URLS names it when redacted. */
const labelOf = (m: Verdict['members'][number]): string => m.upstream.label;

/** A block number as a 0x-hex quantity (lower case, no leading zeros), or null. */
function quantity(n: bigint | number | string | null | undefined): string | null {
  try {
    if (n === null || n === undefined) return null;
    const value = BigInt(n);
    return value >= 0n ? `0x${value.toString(16)}` : null;
  } catch {
    return null;
  }
}
