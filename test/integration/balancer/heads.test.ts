/**
 * Heads (lib/health/heads.ts) on the wire: the chain's head is robust to an outlier (one
 * upstream reporting 0xffffffffffff neither makes the others lag nor takes the traffic), the
 * head tracker polls on heads.intervalMs, answers passing through raise heads, and /chains and
 * /metrics show them. On real nodes: three anvils, one behind, heads seen as they are.
 */
import test from 'ava';
import { keccak256 } from 'ethers';
import { startAnvils, stopAllAnvils } from '../../support/anvil.js';
import { defaultAnswer, startFakeUpstream, type AnswerFn, type RpcCallIn } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

const node = (head: string, tags?: { safe: string; finalized: string } | 'none'): AnswerFn => (call) => {
  if (call.method === 'eth_chainId') return { result: '0x1' };
  if (call.method === 'eth_blockNumber') return { result: head };
  const tag = call.params?.[0];
  if (call.method === 'eth_getBlockByNumber' && (tag === 'safe' || tag === 'finalized')) {
    if (tags === 'none' || tags === undefined) return { error: { code: -32602, message: `invalid block tag ${String(tag)}` } };
    return { result: { number: tags[tag], hash: `0x${'ab'.repeat(32)}` } };
  }
  // A node answers a write with its transaction's hash (for these bytes, keccak-256 of them).
  if (call.method === 'eth_sendRawTransaction') return { result: keccak256(String(call.params?.[0])) };
  return defaultAnswer(call);
};

const methodCalls = (fake: { requests: { body: unknown }[] }, method: string) =>
  fake.requests.filter((q) => (q.body as RpcCallIn).method === method).length;

test('should keep the honest upstreams in front when one reports an absurd head', async (t) => {
  const fakes = await Promise.all([startFakeUpstream({ answer: node('0xffffffffffff') }), startFakeUpstream({ answer: node('0x100') }), startFakeUpstream({ answer: node('0x100') })]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url) } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await gw.rpc.startHealthChecks().runOnce();

  const chains = await gw.request('GET', '/chains');
  const ups = chains.body[0].upstreams;
  t.deepEqual(chains.body[0].heads, { latest: '256', safe: null, finalized: null }, 'the chain head is the honest one');
  t.deepEqual(ups.map((u: { state: string }) => u.state), ['healthy', 'healthy', 'healthy']);
  t.deepEqual(ups.map((u: { lag: number }) => u.lag), [0, 0, 0], 'nobody lags behind the outlier');
  t.deepEqual(ups.map((u: { suspect: boolean }) => u.suspect), [true, false, false]);
  t.is(ups[0].heads.latest, String(0xffffffffffff));

  const before = fakes[0]!.calls;
  const sent = await gw.post('/rpc/1', rpc('eth_sendRawTransaction', ['0x02f8']));
  t.is(sent.status, 200);
  // N=1 spreads over the honest two (strategy balanced): either may answer, never the suspect one.
  const honest = [fakes[1]!.url, fakes[2]!.url];
  t.true(honest.includes(String(sent.headers['x-forwarded-from'])), 'eth_sendRawTransaction goes to an honest upstream');
  const read = await gw.post('/rpc/1', rpc('eth_blockNumber'));
  t.is(read.body.result, '0x100');
  t.true(honest.includes(String(read.headers['x-forwarded-from'])));
  t.is(fakes[0]!.calls, before, 'the suspect upstream got none of the N=1 traffic');

  const metrics = await gw.request('GET', '/metrics');
  t.regex(metrics.text, /omnigate_chain_head_block\{chain="1",tag="latest"\} 256\n/);
  t.regex(metrics.text, new RegExp(`omnigate_upstream_suspect\\{chain="1",upstream="${fakes[0]!.url}/?"\\} 1\\n`));
  t.regex(metrics.text, new RegExp(`omnigate_upstream_suspect\\{chain="1",upstream="${fakes[1]!.url}/?"\\} 0\\n`));
  t.regex(metrics.text, new RegExp(`omnigate_upstream_head_block\\{chain="1",upstream="${fakes[1]!.url}/?",tag="latest"\\} 256\\n`));
  t.regex(metrics.text, /omnigate_upstream_lag_blocks\{chain="1",upstream="[^"]+"\} 0\n/);
});

test('should still mark a real laggard lagging against the robust head', async (t) => {
  const fakes = await Promise.all([startFakeUpstream({ answer: node('0xf0') }), startFakeUpstream({ answer: node('0x100') }), startFakeUpstream({ answer: node('0x100') })]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url) } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await gw.rpc.startHealthChecks().runOnce();
  const ups = (await gw.request('GET', '/chains')).body[0].upstreams;
  t.deepEqual(ups.map((u: { state: string }) => u.state), ['lagging', 'healthy', 'healthy']);
  t.is(ups[0].lag, 16);
  t.is((await gw.post('/rpc/1', rpc('eth_blockNumber'))).headers['x-forwarded-from'], fakes[1]!.url);
});

test('should poll heads on heads.intervalMs, with safe and finalized where the node has them and a finality depth where not', async (t) => {
  let polled!: () => void;
  const secondPoll = new Promise<void>((resolve) => (polled = resolve));
  const withTags = node('0x100', { safe: '0xe0', finalized: '0xc0' });
  let blockNumbers = 0;
  const fakes = await Promise.all([
    startFakeUpstream({
      answer: (call) => {
        if (call.method === 'eth_blockNumber' && ++blockNumbers === 2) polled();
        return withTags(call);
      },
    }),
    startFakeUpstream({ answer: node('0x100', 'none') }),
  ]);
  const gw = await startGateway({ heads: { intervalMs: 100 }, chains: { 1: { rpcs: fakes.map((f) => f.url), heads: { finalityDepth: 32 } } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  gw.rpc.startHeadTracking();
  await secondPoll; // a first round at once, a second one heads.intervalMs later
  t.is(methodCalls(fakes[0]!, 'eth_chainId'), 0, 'the head tracker is not the health probe');
  const chains = (await gw.request('GET', '/chains')).body[0];
  t.deepEqual(chains.upstreams[0].heads, { latest: '256', safe: '224', finalized: '192' });
  t.deepEqual(chains.upstreams[1].heads, { latest: '256', safe: '224', finalized: '224' }, 'no tags: latest − heads.finalityDepth');
  t.deepEqual(chains.heads, { latest: '256', safe: '224', finalized: '192' });
  t.is(chains.upstreams[0].state, 'unknown', 'head polls are not health probes');
});

test('should raise heads from answers passing through', async (t) => {
  const fakes = await Promise.all([startFakeUpstream({ answer: node('0x200') }), startFakeUpstream({ answer: node('0x200') })]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url) } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const heads = async () => (await gw.request('GET', '/chains')).body[0].upstreams.map((u: { heads: { latest: string | null } }) => u.heads.latest);
  t.deepEqual(await heads(), [null, null]);
  t.is((await gw.post('/rpc/1', rpc('eth_blockNumber'))).body.result, '0x200');
  t.deepEqual(await heads(), ['512', null], 'eth_blockNumber\'s answer');
  await gw.post('/confirmations/2/rpc/1', rpc('eth_getBlockByNumber', ['0x300', false]));
  t.deepEqual(await heads(), ['768', '768'], 'a block\'s number, from both voters');
  await gw.post('/rpc/1', rpc('eth_blockNumber'));
  t.deepEqual(await heads(), ['768', '768'], 'an answer never lowers a head');
});

test.after.always(async () => {
  await stopAllAnvils();
});

test('should see the heads of three anvil nodes, one behind', async (t) => {
  const cluster = await startAnvils(3);
  t.teardown(() => cluster.stop());
  const [a, b, c] = cluster.nodes;
  for (let i = 0; i < 3; i++) await cluster.mineSame([], cluster.genesisTimestamp + 12 * (i + 1), [a!, b!]);
  await c!.rpc('evm_mine', [cluster.genesisTimestamp + 12]);
  const gw = await startGateway({ chains: { [cluster.chainId]: { rpcs: cluster.urls } } });
  t.teardown(() => gw.close());
  await gw.rpc.startHeadTracking().runOnce();
  const chain = (await gw.request('GET', '/chains')).body[0];
  t.deepEqual(chain.upstreams.map((u: { heads: { latest: string } }) => u.heads.latest), ['3', '3', '1']);
  t.is(chain.heads.latest, '3');
  t.deepEqual(chain.upstreams.map((u: { lag: number }) => u.lag), [0, 0, 2]);
  t.deepEqual(chain.upstreams.map((u: { suspect: boolean }) => u.suspect), [false, false, false]);
  for (const u of chain.upstreams) t.truthy(u.heads.finalized, 'anvil answers the finalized tag (or the depth gives one)');
});

test('should count one head per provider, so one provider\'s several endpoints cannot make the others suspect', async (t) => {
  // Two endpoints of one provider (say its https and wss URLs) far behind, two other providers
  // at the tip: the chain's head is the tip; the behind ones lag, the others are not suspect.
  const fakes = await Promise.all([
    startFakeUpstream({ answer: node('0x100') }),
    startFakeUpstream({ answer: node('0x100') }),
    startFakeUpstream({ answer: node('0x1000') }),
    startFakeUpstream({ answer: node('0x1000') }),
  ]);
  const [s1, s2, a, b] = fakes.map((f) => f.url);
  const gw = await startGateway({ chains: { 1: { rpcs: [{ url: s1!, provider: 'shady' }, { url: s2!, provider: 'shady' }, a!, b!] } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await gw.rpc.startHealthChecks().runOnce();

  const chain = (await gw.request('GET', '/chains')).body[0];
  t.is(chain.heads.latest, String(0x1000), 'the head of most providers');
  t.deepEqual(chain.upstreams.map((u: { suspect: boolean }) => u.suspect), [false, false, false, false]);
  t.deepEqual(chain.upstreams.map((u: { state: string }) => u.state), ['lagging', 'lagging', 'healthy', 'healthy']);

  const head = await gw.post('/rpc/1', rpc('eth_blockNumber'));
  t.is(head.body.result, '0x1000', 'the unverified read goes to a provider at the tip');
  // A range up to a block the two providers at the tip have: voted on by them, not refused.
  const logs = await gw.post('/confirmations/2/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x800', toBlock: '0x800' }]));
  t.is(logs.status, 200, logs.text);
  t.deepEqual(String(logs.headers['x-checked-urls']).split(',').sort(), [a!, b!].sort());
});
