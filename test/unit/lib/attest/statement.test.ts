/**
 * The statement's byte encoding and the fixed test vector of lib/attest/README.md: a known seed
 * and a known statement give known bytes and a known signature (Ed25519 signatures are
 * deterministic), so another implementation can check itself against them.
 */
import { sign } from 'node:crypto';
import test from 'ava';
import stringify from 'json-stable-stringify';
import { attestationRequestHash, decodeStatement, encodeStatement, statementFormat, type Statement } from '../../../../lib/attest/statement.js';
import { defaultKeyId, privateKeyOf, rawPublicKey } from '../../../../lib/attest/keys.js';
import { verifyAttestation } from '../../../../lib/attest/verify.js';

const seed = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
const vector = {
  publicKey: '03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8',
  keyId: '56475aa75463474c',
  request: 'd44ba34bbbf3227fe2d699286b122e0684e14a8e189cfa609154211314e44522',
  answer: 'e43cf93451afe71ba0c4ebe702ed6992dbb2c355f14d00f594b9dc098e8725f0',
  bytes:
    '{"answer":"e43cf93451afe71ba0c4ebe702ed6992dbb2c355f14d00f594b9dc098e8725f0","block":{"hash":null,"number":"0x1312d00"},"chain":"1","format":"omnigate.attestation/1","keyId":"56475aa75463474c","member":null,"method":"eth_getBalance","quorum":["https://eth.drpc.org","https://ethereum-rpc.publicnode.com"],"request":"d44ba34bbbf3227fe2d699286b122e0684e14a8e189cfa609154211314e44522","required":2,"signedAt":1764288000,"verifiedBy":"agreement"}',
  signature: '0d8d0b50bc9ca0e019541248a88a938183b9e141fcaf7c7957f98f7326126691a1132ef49f5d765f638ebde553faeec31e8daec275d06d08e3918b08dae2110a',
};

const statement = (): Statement => ({
  format: statementFormat,
  chain: '1',
  method: 'eth_getBalance',
  request: attestationRequestHash('eth_getBalance', ['0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2', '0x1312d00']),
  block: { number: '0x1312d00', hash: null },
  verifiedBy: 'agreement',
  required: 2,
  quorum: ['https://eth.drpc.org', 'https://ethereum-rpc.publicnode.com'],
  answer: vector.answer,
  member: null,
  signedAt: 1764288000,
  keyId: vector.keyId,
});

test('the test vector: the known seed gives the known public key and key id, the statement the known bytes and signature', (t) => {
  const key = privateKeyOf(seed)!;
  t.is(rawPublicKey(key).toString('hex'), vector.publicKey);
  t.is(defaultKeyId(key), vector.keyId);
  t.is(attestationRequestHash('eth_getBalance', ['0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2', '0x1312d00']), vector.request);
  const bytes = encodeStatement(statement());
  t.is(bytes.toString('utf8'), vector.bytes);
  t.is(sign(null, bytes, key).toString('hex'), vector.signature);
  const attestation = `${bytes.toString('base64url')}.${Buffer.from(vector.signature, 'hex').toString('base64url')}`;
  const check = verifyAttestation(attestation, vector.publicKey);
  t.true(check.valid, check.valid ? '' : check.reason);
  t.deepEqual(check.statement, statement());
});

test('the encoding is json-stable-stringify\'s: keys sorted at every level, no whitespace', (t) => {
  const s = statement();
  s.block = { number: null, hash: '0x' + 'ab'.repeat(32) };
  s.member = 3;
  s.verifiedBy = 'proof';
  t.is(encodeStatement(s).toString('utf8'), stringify(s)!);
});

test('the request hash is SHA-256 of the method, a line feed and the params with sorted keys; the id is not in it', (t) => {
  const a = attestationRequestHash('eth_getLogs', [{ toBlock: '0x2', fromBlock: '0x1', address: '0xaa' }]);
  const b = attestationRequestHash('eth_getLogs', [{ address: '0xaa', fromBlock: '0x1', toBlock: '0x2' }]);
  t.is(a, b);
  t.not(a, attestationRequestHash('eth_getLogs', [{ address: '0xaa', fromBlock: '0x1', toBlock: '0x3' }]));
  t.is(attestationRequestHash('eth_chainId'), attestationRequestHash('eth_chainId', []));
});

test('decoding refuses what is not a statement of this format, with the reason', (t) => {
  const good = encodeStatement(statement());
  t.deepEqual(decodeStatement(good), { statement: statement() });
  const cases: [unknown, RegExp][] = [
    ['not json', /not JSON/],
    [[1], /not a JSON object/],
    [{ ...statement(), format: 'omnigate.attestation/2' }, /format is "omnigate.attestation\/2"/],
    [{ ...statement(), quorum: 'a' }, /quorum is missing or malformed/],
    [{ ...statement(), required: 0 }, /required is missing or malformed/],
    [{ ...statement(), answer: 'XY' }, /answer is missing or malformed/],
    [{ ...statement(), extra: 1 }, /fields this format does not define/],
    [{ ...statement(), block: { number: '0x1' } }, /block is missing or malformed/],
  ];
  for (const [value, reason] of cases) {
    const bytes = Buffer.from(typeof value === 'string' ? value : stringify(value)!);
    const out = decodeStatement(bytes);
    t.true('reason' in out && reason.test(out.reason), `${JSON.stringify(value)}: ${JSON.stringify(out)}`);
  }
  const pretty = Buffer.from(JSON.stringify(statement(), null, 1));
  t.deepEqual(decodeStatement(pretty), { reason: 'the statement is not in its canonical form' });
});
