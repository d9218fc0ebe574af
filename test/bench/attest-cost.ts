/**
 * The CPU cost of signed attestations (lib/attest), in this process: what a confirmed answer pays
 * when `attest:` is configured (the statement built, encoded and signed with Ed25519, the header
 * value written), the Ed25519 signature alone, and what a client pays to check one
 * (verifyAttestation, with and without recomputing the answer's hash from its body); beside them,
 * for scale, the SHA-256 of an answer's canonical form that every answer already pays. Rounds are
 * interleaved (each operation once per round, in turn) and the median per operation is printed, in
 * CPU time (user + system of this process) and in wall time.
 *
 *   node --import tsx test/bench/attest-cost.ts            (BENCH_ROUNDS, default 3; BENCH_MS per
 *                                                           operation and round, default 300)
 */
import { sign } from 'node:crypto';
import { createAttester } from '../../lib/attest/attester.js';
import { privateKeyOf, publicKeyOf } from '../../lib/attest/keys.js';
import { encodeStatement, type Statement } from '../../lib/attest/statement.js';
import { verifyAttestation } from '../../lib/attest/verify.js';
import { canonicalForm, sha256Hex } from '../../lib/verify/answers/canonical.js';
import { silentLogger } from '../../lib/log.js';
import type { RpcContext } from '../../lib/pipeline/context.js';
import type { Verdict } from '../../lib/verify/question.js';
import { perCallTable } from './parts.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MS = Number(process.env.BENCH_MS ?? 300);

const SEED = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
const key = privateKeyOf(SEED)!;
const publicKey = publicKeyOf('03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8')!;
const attester = createAttester({ key });
const body = '{"jsonrpc":"2.0","id":1,"result":"0xde0b6b3a7640000"}';
const hash = sha256Hex(canonicalForm('eth_getBalance', { result: '0xde0b6b3a7640000' }));
const ctx = {
  requestId: 'r',
  log: silentLogger,
  chain: { id: '1', extraConfirmable: new Map() },
  payload: { calls: [{ id: 1, method: 'eth_getBalance', params: ['0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2', '0x1312d00'] }], batch: false, raw: Buffer.from(body) },
  required: 3,
} as unknown as RpcContext;
const verdict = {
  hash,
  members: ['https://eth-mainnet.g.alchemy.com/v2/***', 'https://ethereum-rpc.publicnode.com', 'https://eth.drpc.org'].map((label) => ({ upstream: { label } })),
} as unknown as Verdict;
const attestation = attester.attest(ctx, verdict, null)!;
const statementBytes = encodeStatement(JSON.parse(Buffer.from(attestation.split('.')[0]!, 'base64url').toString()) as Statement);
if (!verifyAttestation(attestation, publicKey, { answerBody: body }).valid) throw new Error('attest-cost: the attestation does not verify');

const ops: [string, () => unknown][] = [
  ['X-Json-Hash of the answer (canonical form + SHA-256), for scale', () => sha256Hex(canonicalForm('eth_getBalance', { result: '0xde0b6b3a7640000' }))],
  [`Ed25519 sign of the statement (${statementBytes.length} bytes)`, () => sign(null, statementBytes, key)],
  ['attester.attest: one signed answer (statement, encoding, signature, header value)', () => attester.attest(ctx, verdict, null)],
  ['verifyAttestation (signature + statement)', () => verifyAttestation(attestation, publicKey)],
  ['verifyAttestation with answerBody (hash recomputed)', () => verifyAttestation(attestation, publicKey, { answerBody: body })],
];

console.log(await perCallTable(ops, ROUNDS, MS, 1));
console.log(`\nX-Attestation: ${attestation.length} bytes`);
