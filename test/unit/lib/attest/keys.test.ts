/** Keys of attestations: each accepted form gives the same key; anything else is refused without being quoted. */
import test from 'ava';
import { defaultKeyId, newKeyPair, privateKeyOf, publicKeyOf, rawPublicKey } from '../../../../lib/attest/keys.js';

test('a private key from its seed in hex, 0x-hex, base64, base64url, or PEM is the same key', (t) => {
  const pair = newKeyPair();
  const fromPem = privateKeyOf(pair.privatePem)!;
  const seed = fromPem.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
  for (const text of [seed.toString('hex'), `0x${seed.toString('hex')}`, seed.toString('base64'), seed.toString('base64url'), `  ${pair.privatePem}\n`]) {
    const key = privateKeyOf(text);
    t.truthy(key, text.slice(0, 10));
    t.is(rawPublicKey(key!).toString('hex'), pair.publicHex);
  }
  t.is(defaultKeyId(fromPem), pair.keyId);
  t.regex(pair.keyId, /^[0-9a-f]{16}$/);
});

test('a public key from its PEM, its raw hex or base64, or the private key\'s PEM', (t) => {
  const pair = newKeyPair();
  const raw = Buffer.from(pair.publicHex, 'hex');
  for (const text of [pair.publicPem, pair.publicHex, raw.toString('base64'), raw.toString('base64url'), pair.privatePem]) {
    t.is(rawPublicKey(publicKeyOf(text)!).toString('hex'), pair.publicHex);
  }
});

test('texts that hold no Ed25519 key are refused', (t) => {
  for (const text of ['', 'abc', 'ab'.repeat(31), 'ab'.repeat(33), '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----', 'zz'.repeat(32)]) {
    t.is(privateKeyOf(text), undefined, text);
    t.is(publicKeyOf(text), undefined, text);
  }
});
