/**
 * The signer: a keyFile read at build (an unreadable file, or one holding no key, is a ConfigError
 * naming attest.keyFile and never its content); the statement it signs for a request context
 * (the pin's block, or the block and header hash and `proof` the proof stage recorded in ctx.proof).
 */
import test from 'ava';
import { createAttester } from '../../../../lib/attest/attester.js';
import { privateKeyOf } from '../../../../lib/attest/keys.js';
import { verifyAttestation } from '../../../../lib/attest/verify.js';
import { ConfigError } from '../../../../lib/errors.js';
import type { RpcContext } from '../../../../lib/pipeline/context.js';
import type { Verdict } from '../../../../lib/verify/question.js';
import { silentLogger } from '../../../../lib/log.js';

const SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const HASH = `0x${'ab'.repeat(32)}`;

function context(method: string, params: unknown[], extra: Record<string, unknown> = {}): RpcContext {
  return {
    requestId: 'r',
    log: silentLogger,
    chain: { id: '1', extraConfirmable: new Map() } as unknown as RpcContext['chain'],
    payload: { calls: [{ id: 1, method, params }], batch: false, raw: Buffer.alloc(0) },
    required: 2,
    ...extra,
  } as RpcContext;
}
const verdict = { hash: 'cd'.repeat(32), members: [{ upstream: { label: 'https://a.example/v2/***' } }, { upstream: { label: 'https://b.example' } }] } as unknown as Verdict;

test('a keyFile is read when the signer is built; unreadable or keyless, a ConfigError names attest.keyFile, not the content', (t) => {
  const signer = createAttester({ keyFile: '/k.pem' }, { readFile: () => `${SEED}\n` });
  t.is(signer.keyId, '21fe31dfa154a261');
  const missing = t.throws(() => createAttester({ keyFile: '/nope' }, { readFile: () => { throw Object.assign(new Error('x'), { code: 'ENOENT' }); } }), { instanceOf: ConfigError });
  t.regex(missing!.message, /attest\.keyFile: cannot read \/nope: ENOENT/);
  const content = 'top-secret-but-not-a-key-0123456789';
  const keyless = t.throws(() => createAttester({ keyFile: '/k' }, { readFile: () => content }), { instanceOf: ConfigError });
  t.regex(keyless!.message, /attest\.keyFile: \/k does not hold an Ed25519 private key/);
  t.false(keyless!.message.includes(content));
});

test('the statement: the pin\'s block number or hash; signedAt from the clock; other chains not signed', (t) => {
  const signer = createAttester({ key: privateKeyOf(SEED)!, chains: ['1'] }, { now: () => 1_764_288_000_500 });
  const byNumber = verifyAttestation(signer.attest(context('eth_getBalance', ['0xaa', '0x1F']), verdict, null)!, PUBLIC);
  t.like(byNumber.statement, { block: { number: '0x1f', hash: null }, signedAt: 1_764_288_000, verifiedBy: 'agreement', quorum: ['https://a.example/v2/***', 'https://b.example'], required: 2, answer: 'cd'.repeat(32) });
  const byHash = verifyAttestation(signer.attest(context('eth_getBlockByHash', [HASH.toUpperCase().replace('0X', '0x'), false]), verdict, 4)!, PUBLIC);
  t.like(byHash.statement, { block: { number: null, hash: HASH }, member: 4 });
  const constant = verifyAttestation(signer.attest(context('eth_chainId', []), verdict, null)!, PUBLIC);
  t.deepEqual(constant.statement?.block, { number: null, hash: null });
  const other = context('eth_getBalance', ['0xaa', '0x1']);
  other.chain = { id: '10', extraConfirmable: new Map() } as unknown as RpcContext['chain'];
  t.is(signer.attest(other, verdict, null), undefined);
});

test('a proven answer (ctx.proof): verifiedBy proof, with the agreed header\'s number and hash', (t) => {
  const signer = createAttester({ key: privateKeyOf(SEED)! });
  for (const blockNumber of [31n, 31, '0x1f']) {
    const ctx = context('eth_getBalance', ['0xaa', '0x1f'], { proof: { verifiedBy: 'proof', headerHash: HASH, blockNumber } });
    const check = verifyAttestation(signer.attest(ctx, verdict, null)!, PUBLIC);
    t.like(check.statement, { verifiedBy: 'proof', block: { number: '0x1f', hash: HASH } });
  }
  const agreed = context('eth_getBalance', ['0xaa', '0x1f'], { proof: { verifiedBy: 'agreement', headerHash: null, blockNumber: null } });
  t.like(verifyAttestation(signer.attest(agreed, verdict, null)!, PUBLIC).statement, { verifiedBy: 'agreement', block: { number: '0x1f', hash: null } });
});
