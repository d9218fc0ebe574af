/**
 * Signed attestations on the wire (config `attest:`): a confirmed answer carries X-Attestation and
 * X-Attestation-Key, verifiable with verifyAttestation against the body received; a changed body,
 * a changed statement or another key fails with its reason; an unconfirmed answer carries none; a
 * cache hit carries one naming the entry's quorum; on the finalized route the statement names the
 * block `latest` was pinned to; a batch carries one per confirmed member (at most 8 KiB); no
 * statement holds an upstream's URL key, and the private key is in no log line nor error.
 */
import test, { type ExecutionContext } from 'ava';
import { generateKeyPairSync } from 'node:crypto';
import { finalizedChain, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway, type Reply } from '../../support/gateway.js';
import { verifyAttestation } from '../../../lib/attest/verify.js';
import { attestationMaxBytes } from '../../../lib/attest/attester.js';
import { attestationRequestHash, encodeStatement, type Statement } from '../../../lib/attest/statement.js';
import { defaultKeyId, publicKeyOf, rawPublicKey } from '../../../lib/attest/keys.js';
import { exposedHeaders } from '../../../lib/pipeline/headers.js';
import type { Logger } from '../../../lib/log.js';
import { validateConfig } from '../../../config/schema.js';

const ADDRESS = '0x00000000000000000000000000000000000000aa';
const SECRET = 'sEcReTpRoViDeRkEy0123456789';
const SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';

/** A logger that keeps every line it is given, as text. */
function recordingLogger(lines: string[]): Logger {
  const log = (level: string) => (...args: unknown[]) => void lines.push(`${level} ${JSON.stringify(args, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`);
  const logger: Record<string, unknown> = { level: 'trace', isLevelEnabled: () => true };
  for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace']) logger[level] = log(level);
  logger.child = () => logger;
  return logger as unknown as Logger;
}

async function setup(t: ExecutionContext, attest: Record<string, unknown> = { key: SEED }, lines: string[] = []): Promise<{ list: FakeUpstream[]; gw: Gateway }> {
  const list = await Promise.all([0, 1, 2].map(() => startFakeUpstream({ path: `/v2/${SECRET}`, answer: finalizedChain(() => 0x5a) })));
  const gw = await startGateway(
    { refreshInterval: 3600, attest, chains: { 1337: { rpcs: list.map((f) => f.url) } } },
    { logger: recordingLogger(lines) },
  );
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  await gw.rpc.startHeadTracking().runOnce();
  return { list, gw };
}

const attestationOf = (r: Reply) => r.headers['x-attestation'] as string;
const balanceCalls = (list: FakeUpstream[]) => list.reduce((n, f) => n + f.requests.filter((r) => (r.body as { method?: string }).method === 'eth_getBalance').length, 0);

test('a confirmed answer carries an attestation that verifies against the body received, naming the chain, question, block, quorum and answer', async (t) => {
  const { gw } = await setup(t);
  const r = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x10'], 7), { origin: 'https://app.example' });
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  const attestation = attestationOf(r);
  t.truthy(attestation);
  t.is(r.headers['x-attestation-key'], '21fe31dfa154a261');
  t.regex(String(r.headers['access-control-expose-headers']), /X-Attestation, X-Attestation-Key/);
  t.regex(exposedHeaders, /X-Attestation-Key/);
  const check = verifyAttestation(attestation!, PUBLIC, { answerBody: r.text });
  t.true(check.valid, check.valid ? '' : check.reason);
  const s = check.statement!;
  t.is(s.chain, '1337');
  t.is(s.method, 'eth_getBalance');
  t.is(s.request, attestationRequestHash('eth_getBalance', [ADDRESS, '0x10']));
  t.deepEqual(s.block, { number: '0x10', hash: null });
  t.is(s.verifiedBy, 'agreement');
  t.is(s.required, 2);
  t.is(s.answer, String(r.headers['x-json-hash']));
  t.deepEqual(s.quorum, String(r.headers['x-checked-urls']).split(','));
  t.is(s.member, null);
  t.is(s.keyId, String(r.headers['x-attestation-key']));
  t.true(Math.abs(s.signedAt - Date.now() / 1000) < 600);
  // No provider key in the statement, though every upstream URL holds one.
  const bytes = Buffer.from(attestation!.split('.')[0]!, 'base64url').toString('utf8');
  t.false(bytes.includes(SECRET));
  t.regex(bytes, /\/v2\/\*\*\*/, 'the quorum names the upstreams by their redacted URL');
});

test('a block answer (a shaped result) verifies too, its hash recomputed from the body; a block hash pin names the hash', async (t) => {
  const { gw } = await setup(t);
  const r = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBlockByNumber', ['0x11', false]));
  t.is(r.status, 200, r.text);
  const check = verifyAttestation(attestationOf(r)!, PUBLIC, { answerBody: r.text });
  t.true(check.valid, check.valid ? '' : check.reason);
  t.deepEqual(check.statement!.block, { number: '0x11', hash: null });
  const hash = `0x${'0'.repeat(62)}11`;
  const byHash = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBlockByHash', [hash.toUpperCase().replace('0X', '0x'), false]));
  t.is(byHash.status, 200, byHash.text);
  const c2 = verifyAttestation(attestationOf(byHash)!, PUBLIC, { answerBody: byHash.text });
  t.true(c2.valid, c2.valid ? '' : c2.reason);
  t.deepEqual(c2.statement!.block, { number: null, hash });
});

test('tampering fails with the reason: a changed body, a changed statement, another key, a wrong expectation', async (t) => {
  const { gw } = await setup(t);
  const r = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x10']));
  const attestation = attestationOf(r)!;
  const changedBody = r.text.replace(/"result":"0x[0-9a-f]+"/, '"result":"0x1"');
  t.not(changedBody, r.text);
  const body = verifyAttestation(attestation, PUBLIC, { answerBody: changedBody });
  t.false(body.valid);
  t.regex(body.valid ? '' : body.reason, /the body is not the answer attested/);
  const [payload, signature] = attestation.split('.') as [string, string];
  const statement = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Statement;
  const forged = `${encodeStatement({ ...statement, required: 3 }).toString('base64url')}.${signature}`;
  const changed = verifyAttestation(forged, PUBLIC);
  t.false(changed.valid);
  t.regex(changed.valid ? '' : changed.reason, /signature does not match/);
  const other = rawPublicKey(generateKeyPairSync('ed25519').publicKey).toString('hex');
  const wrongKey = verifyAttestation(attestation, other);
  t.false(wrongKey.valid);
  t.regex(wrongKey.valid ? '' : wrongKey.reason, /signature does not match/);
  const expected = verifyAttestation(attestation, PUBLIC, { expect: { chain: '1' } });
  t.false(expected.valid);
  t.regex(expected.valid ? '' : expected.reason, /chain is "1337", expected "1"/);
  const tooFew = verifyAttestation(attestation, PUBLIC, { expect: { minRequired: 3 } });
  t.false(tooFew.valid);
  t.true(verifyAttestation(attestation, PUBLIC, { expect: { request: attestationRequestHash('eth_getBalance', [ADDRESS, '0x10']), minRequired: 2 } }).valid);
  t.false(verifyAttestation('nonsense', PUBLIC).valid);
});

test('on the finalized route, the statement names the block latest was pinned to, and the question as asked of the upstreams', async (t) => {
  const { gw } = await setup(t);
  const r = await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'latest']));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  const check = verifyAttestation(attestationOf(r), PUBLIC, { answerBody: r.text });
  t.true(check.valid, check.valid ? '' : check.reason);
  t.deepEqual(check.statement!.block, { number: '0x5a', hash: null });
  t.is(check.statement!.request, attestationRequestHash('eth_getBalance', [ADDRESS, '0x5a']));
});

test('an answer that is not confirmed (latest) carries no attestation', async (t) => {
  const { gw } = await setup(t);
  const r = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'latest']));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'false');
  t.is(r.headers['x-attestation'], undefined);
  t.is(r.headers['x-attestation-key'], undefined);
});

test('a cache hit carries an attestation naming the quorum that confirmed the entry, with no upstream call', async (t) => {
  const { list, gw } = await setup(t);
  const first = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x10'], 1));
  t.is(first.headers['x-cache'], 'MISS');
  const hit = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x10'], 'again'));
  t.is(hit.headers['x-cache'], 'HIT');
  t.is(balanceCalls(list), 2, 'the hit asked no upstream');
  const check = verifyAttestation(attestationOf(hit)!, PUBLIC, { answerBody: hit.text });
  t.true(check.valid, check.valid ? '' : check.reason);
  const firstStatement = verifyAttestation(attestationOf(first)!, PUBLIC).statement!;
  t.deepEqual(check.statement!.quorum, firstStatement.quorum);
  t.deepEqual(check.statement!.quorum, String(hit.headers['x-checked-urls']).split(','));
  t.is(check.statement!.request, firstStatement.request, 'the client\'s id is not part of the question');
});

test('a batch carries one attestation per confirmed member, each naming its index in the array and verifying against it', async (t) => {
  const { gw } = await setup(t);
  const r = await gw.post('/confirmations/2/rpc/1337', [
    rpc('eth_getBalance', [ADDRESS, '0x10'], 1),
    rpc('eth_getBalance', [ADDRESS, 'latest'], 2),
    rpc('eth_getBlockByNumber', ['0x12', false], 3),
  ]);
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'false', 'one member is not confirmable');
  const list = String(r.headers['x-attestation']).split(',');
  t.is(list.length, 2);
  const statements = list.map((a) => {
    const check = verifyAttestation(a, PUBLIC, { answerBody: r.text });
    t.true(check.valid, check.valid ? '' : check.reason);
    return check.statement!;
  });
  t.deepEqual(statements.map((s) => [s.member, s.method]), [[0, 'eth_getBalance'], [2, 'eth_getBlockByNumber']]);
  // Another member's body does not match: the index is signed.
  const swapped = JSON.stringify([r.body[2], r.body[1], r.body[0]]);
  t.false(verifyAttestation(list[0]!, PUBLIC, { answerBody: swapped }).valid);
});

test('a large batch: the attestations of the first confirmed members that fit in 8 KiB, in order', async (t) => {
  const { gw } = await setup(t);
  const calls = Array.from({ length: 30 }, (_, i) => rpc('eth_getBalance', [ADDRESS, `0x${(0x10 + i).toString(16)}`], i));
  const r = await gw.post('/confirmations/2/rpc/1337', calls);
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  const value = String(r.headers['x-attestation']);
  t.true(value.length <= attestationMaxBytes);
  const list = value.split(',');
  t.true(list.length >= 5 && list.length < 30, `${list.length} attestations`);
  t.deepEqual(list.map((a) => verifyAttestation(a, PUBLIC, { answerBody: r.text }).statement?.member), list.map((_, i) => i));
});

test('attest.chains: answers of other chains carry none; keyId names the key', async (t) => {
  const bad = validateConfig({ attest: { key: SEED, chains: [1] }, chains: { 1337: { rpcs: ['https://a.example'] } } });
  t.deepEqual('problems' in bad ? bad.problems.map((p) => p.path) : [], ['attest.chains'], 'a chain that is not configured is a config problem');
  const list = await Promise.all([0, 1].map(() => startFakeUpstream({ answer: finalizedChain(() => 0x5a) })));
  const both = await startGateway({ attest: { key: SEED, keyId: 'gateway-1', chains: [10] }, chains: { 1337: { rpcs: list.map((f) => f.url) }, 10: { rpcs: list.map((f) => f.url) } } });
  t.teardown(async () => {
    await both.close();
    await Promise.all(list.map((f) => f.close()));
  });
  const off = await both.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x10']));
  t.is(off.headers['x-confirmable'], 'true');
  t.is(off.headers['x-attestation'], undefined);
  const on = await both.post('/confirmations/2/rpc/10', rpc('eth_getBalance', [ADDRESS, '0x10']));
  t.is(on.headers['x-attestation-key'], 'gateway-1');
  t.is(verifyAttestation(attestationOf(on)!, PUBLIC).statement?.keyId, 'gateway-1');
});

test('the private key is in no log line, and the default key id is derived from the public key', async (t) => {
  const lines: string[] = [];
  const { gw } = await setup(t, { key: SEED }, lines);
  const r0 = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, '0x10']));
  const r0KeyId = r0.headers['x-attestation-key'];
  await gw.post('/confirmations/2/rpc/1337', rpc('eth_nope', []));
  t.true(lines.length > 0, 'the requests were logged');
  const all = lines.join('\n');
  t.false(all.includes(SEED));
  t.false(all.includes(Buffer.from(SEED, 'hex').toString('base64')));
  t.false(all.includes(SECRET));
  t.is(r0KeyId, defaultKeyId(publicKeyOf(PUBLIC)!));
});
