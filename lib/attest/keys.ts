/**
 * Ed25519 keys of attestations: a private key read from its PKCS#8 PEM or from its 32-byte seed
 * (64 hex digits, or base64/base64url), a public key from its SPKI PEM or its 32 raw bytes (hex
 * or base64), the key id derived from a public key, and new key pairs. Every parse error names the
 * form expected, never the text given (it may be the secret).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';

/** The DER prefix of an Ed25519 PKCS#8 private key (RFC 8410): the 32-byte seed follows. */
const pkcs8Prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
/** The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the 32-byte key follows. */
const spkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');

/** 32 bytes from 64 hex digits or from base64/base64url (43 or 44 characters); undefined otherwise. */
function bytes32(text: string): Buffer | undefined {
  if (/^(0x)?[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text.replace(/^0x/, ''), 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) {
    const out = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    return out.length === 32 ? out : undefined;
  }
  return undefined;
}

export const privateKeyForms = 'an Ed25519 private key: its PKCS#8 PEM (-----BEGIN PRIVATE KEY-----, as `omnigate attest keygen` writes it) or its 32-byte seed as 64 hex digits or base64';
export const publicKeyForms = 'an Ed25519 public key: its PEM (-----BEGIN PUBLIC KEY-----) or its 32 bytes as 64 hex digits or base64';

/** The private key a text holds, or undefined when it holds none (the caller says why, without quoting it). */
export function privateKeyOf(text: string): KeyObject | undefined {
  const trimmed = text.trim();
  try {
    if (trimmed.startsWith('-----BEGIN')) {
      const key = createPrivateKey({ key: trimmed, format: 'pem' });
      return key.asymmetricKeyType === 'ed25519' ? key : undefined;
    }
    const seed = bytes32(trimmed);
    return seed ? createPrivateKey({ key: Buffer.concat([pkcs8Prefix, seed]), format: 'der', type: 'pkcs8' }) : undefined;
  } catch {
    return undefined;
  }
}

/** The public key a text holds (PEM, or 32 raw bytes in hex or base64), or undefined. */
export function publicKeyOf(text: string): KeyObject | undefined {
  const trimmed = text.trim();
  try {
    if (trimmed.startsWith('-----BEGIN')) {
      // A private key's PEM gives its public key too: a verifier may be handed either.
      const key = trimmed.includes('PRIVATE KEY') ? createPublicKey(createPrivateKey({ key: trimmed, format: 'pem' })) : createPublicKey({ key: trimmed, format: 'pem' });
      return key.asymmetricKeyType === 'ed25519' ? key : undefined;
    }
    const raw = bytes32(trimmed);
    return raw ? createPublicKey({ key: Buffer.concat([spkiPrefix, raw]), format: 'der', type: 'spki' }) : undefined;
  } catch {
    return undefined;
  }
}

/** The 32 raw bytes of an Ed25519 public key (of a private key: its public key's). */
export function rawPublicKey(key: KeyObject): Buffer {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return pub.export({ format: 'der', type: 'spki' }).subarray(spkiPrefix.length);
}

/** The key id used when the config names none: the first 16 hex digits of the SHA-256 of the raw public key. */
export function defaultKeyId(key: KeyObject): string {
  return createHash('sha256').update(rawPublicKey(key)).digest('hex').slice(0, 16);
}

/** A key id as the statement and X-Attestation-Key carry it. */
export const keyIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/** A new key pair: the private key's PKCS#8 PEM, the public key's SPKI PEM and raw hex, and its default key id. */
export function newKeyPair(): { privatePem: string; publicPem: string; publicHex: string; keyId: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privatePem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    publicHex: rawPublicKey(publicKey).toString('hex'),
    keyId: defaultKeyId(publicKey),
  };
}
