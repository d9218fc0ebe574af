/**
 * Every answer relayed as a node gives it (issue 25), on the wire: a node's JSON-RPC error is an
 * answer that N upstreams can agree on (and no upstream is charged for it); a provider-trouble
 * error (lib/verify/answers/trouble.ts) is skipped for a result; a receipt by transaction hash is
 * confirmed by N and refused when the N disagree; a custom confirmable method without its pin is
 * refused at start by the real CLI.
 */
import test from 'ava';
import { defaultAnswer, startFakeUpstream, type AnswerFn, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';
import { runCli, configFile } from '../../support/cli.js';

type Teardown = { teardown(fn: () => unknown): void };

async function setup(t: Teardown, answers: AnswerFn[]): Promise<{ fakes: FakeUpstream[]; gw: Gateway }> {
  const fakes = await Promise.all(answers.map((answer) => startFakeUpstream({ answer })));
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  const gw = await startGateway({ chains: { 1337: { rpcs: fakes.map((f) => f.url) } } });
  t.teardown(() => gw.close());
  return { fakes, gw };
}

/** The failures /chains shows for each upstream, in config order. */
async function failures(gw: Gateway): Promise<number[]> {
  const chains = await gw.request('GET', '/chains');
  return (chains.body[0].upstreams as { failures: number }[]).map((u) => u.failures);
}

const sevenHeaders = ['content-type', 'x-request-id', 'x-confirmable', 'x-required-confirmations', 'x-forwarded-from', 'x-checked-urls', 'x-json-hash'];
const hash = `0x${'5a'.repeat(32)}`;
const overflow = { code: -32603, message: 'err: nonce has max value: address 0xC000000000000000000000000000000000000000, nonce: 18446744073709551615 (supplied gas 50000000)' };
const simulate = rpc(
  'eth_simulateV1',
  [{ blockStateCalls: [{ stateOverrides: { '0xc000000000000000000000000000000000000000': { nonce: '0xffffffffffffffff' } }, calls: [{ from: '0xc000000000000000000000000000000000000000', to: '0xc100000000000000000000000000000000000000' }] }], validation: true }, '0x3'],
  'sim-7',
);

test('three upstreams answering the same -32603 node error: the client gets that error with its id, HTTP 200 and the seven headers, and no upstream is charged', async (t) => {
  const { fakes, gw } = await setup(t, [1, 2, 3].map(() => () => ({ error: overflow })));
  const r = await gw.post('/confirmations/3/rpc/1337', simulate);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { jsonrpc: '2.0', id: 'sim-7', error: overflow });
  for (const h of sevenHeaders) t.truthy(r.headers[h], h);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.headers['x-required-confirmations'], '3');
  t.deepEqual(fakes.map((f) => f.calls), [1, 1, 1]);
  t.deepEqual(await failures(gw), [0, 0, 0]);
});

test('at N=1 a node error is the answer of the first upstream: one call, no upstream charged', async (t) => {
  const { fakes, gw } = await setup(t, [1, 2, 3].map(() => () => ({ error: overflow })));
  const r = await gw.post('/rpc/1337', simulate);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { jsonrpc: '2.0', id: 'sim-7', error: overflow });
  t.is(fakes.reduce((sum, f) => sum + f.calls, 0), 1);
  t.deepEqual(await failures(gw), [0, 0, 0]);
});

test('N upstreams agreeing on a geth -32000 error of an eth_call at a fixed block: relayed as the node sent it', async (t) => {
  const nonceError = { code: -32000, message: 'nonce too low: address 0x1111111111111111111111111111111111111111, tx: 0 state: 5' };
  const { fakes, gw } = await setup(t, [1, 2].map(() => () => ({ error: nonceError })));
  const r = await gw.post('/confirmations/2/rpc/1337', rpc('eth_call', [{ to: '0x2222222222222222222222222222222222222222' }, '0x10'], 2 ** 40));
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { jsonrpc: '2.0', id: 2 ** 40, error: nonceError });
  t.deepEqual(fakes.map((f) => f.calls), [1, 1]);
  t.deepEqual(await failures(gw), [0, 0]);
});

test('a provider-trouble error (rate limit) is skipped for a result from another upstream, and puts its provider on back-off rather than charging a failure', async (t) => {
  const limited: AnswerFn = () => ({ error: { code: 429, message: 'Your app has exceeded its compute units per second capacity.' } });
  const { fakes, gw } = await setup(t, [limited, defaultAnswer]);
  const r = await gw.post('/rpc/1337', rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x10']));
  t.is(r.status, 200, r.text);
  t.truthy(r.body.result);
  t.is(r.body.error, undefined);
  t.deepEqual(fakes.map((f) => f.calls), [1, 1]);
  t.deepEqual(await failures(gw), [0, 0]);
  const chains = await gw.request('GET', '/chains');
  t.deepEqual((chains.body[0].upstreams as { rateLimits: number }[]).map((u) => u.rateLimits), [1, 0]);
});

test('a lagging node\'s "header not found" is skipped for the results of two others at N=2', async (t) => {
  const lagging: AnswerFn = () => ({ error: { code: -32000, message: 'header not found' } });
  const { fakes, gw } = await setup(t, [lagging, defaultAnswer, defaultAnswer]);
  const r = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBlockByNumber', ['0x5', false]));
  t.is(r.status, 200, r.text);
  t.is(r.body.result.number, '0x5');
  t.is(r.headers['x-required-confirmations'], '2');
  t.deepEqual(fakes.map((f) => f.calls), [1, 1, 1]);
  t.deepEqual(await failures(gw), [1, 0, 0]);
});

const receipt = (status: string): AnswerFn => (call) =>
  call.method === 'eth_getTransactionReceipt'
    ? { result: { transactionHash: hash, blockNumber: '0x10', blockHash: `0x${'34'.repeat(32)}`, status, logs: [], gasUsed: '0x5208' } }
    : defaultAnswer(call);

test('a receipt by transaction hash is confirmed by N upstreams (X-Confirmable true, X-Required-Confirmations N)', async (t) => {
  const { fakes, gw } = await setup(t, [1, 2, 3].map(() => receipt('0x1')));
  const r = await gw.post('/confirmations/3/rpc/1337', rpc('eth_getTransactionReceipt', [hash], 'deposit'));
  t.is(r.status, 200, r.text);
  t.is(r.body.id, 'deposit');
  t.is(r.body.result.status, '0x1');
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.headers['x-required-confirmations'], '3');
  t.deepEqual(fakes.map((f) => f.calls), [1, 1, 1]);
});

test('a receipt by transaction hash on which the N upstreams disagree is refused (502), never relayed', async (t) => {
  const { gw } = await setup(t, [receipt('0x1'), receipt('0x0'), receipt('0x1')]);
  const r = await gw.post('/confirmations/3/rpc/1337', rpc('eth_getTransactionReceipt', [hash], 'deposit'));
  t.is(r.status, 502, r.text);
  t.is(r.body.id, 'deposit');
  t.is(r.body.result, undefined);
});

test('a receipt asked with a malformed transaction hash is refused before any upstream (-32602, HTTP 200 as a node sends it)', async (t) => {
  const { fakes, gw } = await setup(t, [receipt('0x1')]);
  const r = await gw.post('/rpc/1337', rpc('eth_getTransactionReceipt', ['0x1234'], 4));
  t.is(r.status, 200);
  t.is(r.body.id, 4);
  t.is(r.body.error.code, -32602);
  t.regex(r.body.error.message, /32-byte hex hash/);
  t.is(fakes[0]!.calls, 0);
});

test('a custom confirmable method without its block position is refused at start by the real CLI (exit 2, the path and the fix)', async (t) => {
  const file = await configFile(t, 'chains:\n  1337:\n    rpcs: [https://a.example]\n    confirmableMethods: [eth_getTransactionReceipt, eth_getFooAt]\n', 'omnigate-methods-');
  const r = runCli(['serve', '--config', file, '--no-indexer'], { NODE_ENV: '', LOG_LEVEL: 'info', DATABASE_URL: '' });
  t.teardown(() => {
    if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
  });
  t.is(await r.exited, 2);
  t.regex(r.err.join(''), /chains\.1337\.confirmableMethods\[1\] \(line 4\): eth_getFooAt is not in the method table, so omnigate does not know where its block parameter is: write \{ method: eth_getFooAt, block: <index> \}/);
});
