/**
 * `attest:`: the Ed25519 key that signs confirmed answers (lib/attest). A `key:` value (write it
 * `${ATTEST_KEY}`) is parsed here into a KeyObject: the validated config never holds its text, and
 * no problem ever quotes it. A `keyFile` is read when the pipeline is built (lib/attest/attester.ts).
 */
import type { AttestConfig } from './types.js';
import { keyIdPattern, privateKeyForms, privateKeyOf } from '../lib/attest/keys.js';
import { isObj, show, unknownKeys } from './sections.js';
import { KeyObject } from 'node:crypto';

type Report = (path: string, message: string) => void;

export function attestSection(value: unknown, report: Report): AttestConfig | undefined {
  if (value === undefined || value === null || value === false) return undefined;
  if (!isObj(value)) {
    report('attest', 'must be a mapping. Example: attest: { key: ${ATTEST_KEY}, keyId: gateway-1 }');
    return undefined;
  }
  unknownKeys(value, ['key', 'keyFile', 'keyId', 'chains'], 'attest', report);
  const given = ['key', 'keyFile'].filter((k) => value[k] !== undefined && value[k] !== null);
  if (given.length !== 1) {
    report('attest', `${given.length === 0 ? 'has no key' : 'has key and keyFile'}: give exactly one of key (from the environment: key: \${ATTEST_KEY}) or keyFile (a file holding it). Create one with: omnigate attest keygen --out attest.pem`);
  }
  const out: { -readonly [K in keyof AttestConfig]: AttestConfig[K] } = {};
  if (value.key !== undefined && value.key !== null) {
    // The value is never quoted: it is the secret. From code, a private KeyObject is taken as is.
    const key = typeof value.key === 'string' ? privateKeyOf(value.key) : isPrivateEd25519(value.key) ? value.key : undefined;
    if (!key) report('attest.key', `is not ${privateKeyForms} (its value is not shown). Example: key: \${ATTEST_KEY}`);
    else out.key = key;
  }
  if (value.keyFile !== undefined && value.keyFile !== null) {
    if (typeof value.keyFile !== 'string' || value.keyFile.trim() === '' || value.keyFile.includes('\0')) {
      report('attest.keyFile', `${show(value.keyFile)} is not a file path. Example: keyFile: /run/secrets/attest.pem`);
    } else out.keyFile = value.keyFile;
  }
  if (value.keyId !== undefined && value.keyId !== null) {
    if (typeof value.keyId !== 'string' || !keyIdPattern.test(value.keyId)) {
      report('attest.keyId', `${show(value.keyId)} is not a key id: a short name such as "gateway-1" (letters, digits, . _ : -, at most 64)`);
    } else out.keyId = value.keyId;
  }
  if (value.chains !== undefined && value.chains !== null) {
    if (!Array.isArray(value.chains) || value.chains.length === 0) report('attest.chains', 'must be a non-empty list of chain ids (leave it out to sign on every chain). Example: chains: [1, 8453]');
    else {
      const ids: string[] = [];
      value.chains.forEach((id, i) => {
        const text = typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? String(id) : typeof id === 'string' && /^[1-9][0-9]*$/.test(id) ? id : undefined;
        if (text === undefined) report(`attest.chains[${i}]`, `${show(id)} is not a chain id (a positive integer). Example: chains: [1, 8453]`);
        else ids.push(text);
      });
      out.chains = ids;
    }
  }
  return out;
}

function isPrivateEd25519(value: unknown): value is KeyObject {
  return value instanceof KeyObject && value.type === 'private' && value.asymmetricKeyType === 'ed25519';
}
