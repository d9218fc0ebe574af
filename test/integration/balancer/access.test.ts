/**
 * The door (lib/access) on the wire: every way of presenting a key, missing and wrong keys (401),
 * each 403 reason (chain, method, write, N above and below the key's bounds), N brought within a
 * key's bounds, a batch's forbidden member answered alone, the cache bypass right, the admin
 * routes closed to a client key, per-key metrics, and the key never shown: not in logs,
 * metrics, headers, error messages or data, nor sent upstream, in every form.
 */
import test, { type ExecutionContext } from 'ava';
import type { Logger, LogFn } from '../../../lib/log.js';
import { transactionHash } from '../../../lib/jsonrpc/writes.js';
import { finalizedChain, startFakeUpstream, type AnswerFn, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway, type Reply } from '../../support/gateway.js';

const RELAYER = 'relayer-key-0123456789abcdef';
const DASHBOARD = 'dashboard-key-fedcba9876543210';
const OPS = 'ops-key-00112233445566778899';
const STRANGER = 'stranger-key-0123456789abcdef';
const ADDRESS = '0x00000000000000000000000000000000000000aa';
const hex = (n: number) => `0x${n.toString(16)}`;
const RAW_TX = '0x02f8730180843b9aca00850c92a69c0082520894000000000000000000000000000000000000dead880de0b6b3a764000080c001a0' + '11'.repeat(32) + 'a0' + '22'.repeat(32);

/** A chain at block 100 whose finalized block is 90 (as in cache.test.ts), for the cache bypass. */
const finalized = finalizedChain(() => 90);
const chainAnswer: AnswerFn = (call) => {
  if (call.method === 'eth_sendRawTransaction') return { result: transactionHash(Buffer.from(String(call.params![0]).slice(2), 'hex')) ?? null };
  return finalized(call);
};

function recordingLogger(lines: string[]): Logger {
  const log: LogFn = ((obj: unknown, msg?: string) => lines.push(JSON.stringify({ obj, msg }))) as LogFn;
  const logger: Logger = { debug: log, info: log, warn: log, error: log, child: (b) => (lines.push(JSON.stringify(b)), logger) };
  return logger;
}

const access = {
  keys: [
    { label: 'relayer', key: RELAYER, chains: [1337], minConfirmations: 2, cacheBypass: true },
    { label: 'dashboard', key: DASHBOARD, writes: false, denyMethods: ['eth_getLogs'], maxConfirmations: 2 },
    { label: 'ops', key: OPS, admin: true, methods: ['eth_chainId'] },
  ],
};

async function setup(t: ExecutionContext, raw: Record<string, unknown> = {}): Promise<{ list: FakeUpstream[]; gw: Gateway; lines: string[] }> {
  const list = await Promise.all([0, 1, 2].map(() => startFakeUpstream({ answer: chainAnswer })));
  const lines: string[] = [];
  const gw = await startGateway(
    { refreshInterval: 3600, access, ...raw, chains: { 1337: { rpcs: list.map((f) => f.url) }, 10: { rpcs: [list[0]!.url] } } },
    { logger: recordingLogger(lines) },
  );
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  return { list, gw, lines };
}

const calls = (list: FakeUpstream[]) => list.reduce((n, f) => n + f.calls, 0);
const pinned = (id: unknown = 1) => rpc('eth_getBalance', [ADDRESS, hex(0x10)], id);

function refusal(t: ExecutionContext, r: Reply, status: number, code: number, id: unknown, reason: string): void {
  t.is(r.status, status, r.text);
  t.is(r.headers['content-type'], 'application/json');
  t.is(r.body.jsonrpc, '2.0');
  t.is(r.body.id, id);
  t.is(r.body.error.code, code);
  t.is(r.body.error.data.reason, reason);
}

test('a key is accepted as Authorization: Bearer, as X-Api-Key, and as the last path segment of every RPC route', async (t) => {
  const { gw, list } = await setup(t);
  const ways: [string, Record<string, string>][] = [
    ['/rpc/1337', { authorization: `Bearer ${DASHBOARD}` }],
    ['/rpc/1337', { authorization: `bearer   ${DASHBOARD}` }],
    ['/rpc/1337', { 'x-api-key': DASHBOARD }],
    [`/rpc/1337/${DASHBOARD}`, {}],
    [`/rpc/1337/${DASHBOARD}/`, {}],
    [`/confirmations/2/rpc/1337/${DASHBOARD}`, {}],
  ];
  for (const [path, headers] of ways) {
    const r = await gw.post(path, pinned('x'), headers);
    t.is(r.status, 200, `${path} ${JSON.stringify(headers)}: ${r.text}`);
    t.is(r.body.id, 'x');
    t.truthy(r.body.result);
  }
  // The finalized route with a path key: past the door (no finalized heads yet: -32016, not a 401).
  const finalized = await gw.post(`/finalized/rpc/1337/${DASHBOARD}`, rpc('eth_blockNumber', [], 7));
  t.not(finalized.status, 401, finalized.text);
  t.not(finalized.body.error?.code, -32018);
  const both = await gw.post(`/confirmations/2/finalized/rpc/1337/${DASHBOARD}`, rpc('eth_blockNumber', [], 8));
  t.not(both.status, 401, both.text);
  t.true(calls(list) > 0);
});

test('no key, an unknown key and another Authorization scheme are 401 with the client\'s id, WWW-Authenticate, and no upstream call', async (t) => {
  const { gw, list } = await setup(t);
  refusal(t, await gw.post('/rpc/1337', pinned(41)), 401, -32018, 41, 'missing');
  refusal(t, await gw.post('/rpc/1337', pinned('s'), { authorization: `Bearer ${STRANGER}` }), 401, -32018, 's', 'unknown');
  refusal(t, await gw.post(`/rpc/1337/${STRANGER}`, pinned(2)), 401, -32018, 2, 'unknown');
  refusal(t, await gw.post('/rpc/1337', pinned(3), { 'x-api-key': RELAYER.slice(0, -1) + 'X' }), 401, -32018, 3, 'unknown');
  refusal(t, await gw.post('/rpc/1337', pinned(4), { authorization: `Basic ${Buffer.from(`u:${RELAYER}`).toString('base64')}` }), 401, -32018, 4, 'scheme');
  const r = await gw.post('/rpc/1337', pinned(5));
  t.is(r.headers['www-authenticate'], 'Bearer realm="omnigate"');
  // A batch refused at the door: one error, id null.
  refusal(t, await gw.post('/rpc/1337', [pinned(1), pinned(2)]), 401, -32018, null, 'missing');
  // Before the chain is checked: an unknown chain tells a client without a key nothing of the chains.
  const unknownChain = await gw.post('/rpc/999', pinned(6));
  refusal(t, unknownChain, 401, -32018, 6, 'missing');
  t.false(unknownChain.text.includes('1337'));
  t.is(calls(list), 0);
});

test('an unknown key is refused even where an anonymous tier serves requests without a key', async (t) => {
  const { gw } = await setup(t, { access: { ...access, anonymous: { maxConfirmations: 1 } } });
  t.is((await gw.post('/rpc/1337', pinned())).status, 200);
  refusal(t, await gw.post('/rpc/1337', pinned(9), { 'x-api-key': STRANGER }), 401, -32018, 9, 'unknown');
});

test('each 403 reason: chain, method (allow list and deny list), write, N above the key\'s largest and below its smallest', async (t) => {
  const { gw, list } = await setup(t);
  const relayer = { authorization: `Bearer ${RELAYER}` };
  const dashboard = { 'x-api-key': DASHBOARD };
  const ops = { 'x-api-key': OPS };
  const chain = await gw.post('/rpc/10', pinned(1), relayer);
  refusal(t, chain, 403, -32019, 1, 'chain');
  t.like(chain.body.error.data, { key: 'relayer', chain: '10' });
  const notListed = await gw.post('/rpc/1337', rpc('eth_blockNumber', [], 2), ops);
  refusal(t, notListed, 403, -32019, 2, 'method');
  t.like(notListed.body.error.data, { key: 'ops', method: 'eth_blockNumber' });
  refusal(t, await gw.post('/rpc/1337', rpc('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }], 3), dashboard), 403, -32019, 3, 'method');
  const write = await gw.post('/rpc/1337', rpc('eth_sendRawTransaction', [RAW_TX], 4), dashboard);
  refusal(t, write, 403, -32019, 4, 'write');
  const above = await gw.post('/confirmations/3/rpc/1337', pinned(5), dashboard);
  refusal(t, above, 403, -32019, 5, 'confirmations');
  t.like(above.body.error.data, { asked: 3, max: 2 });
  const below = await gw.post('/confirmations/1/rpc/1337', pinned(6), relayer);
  refusal(t, below, 403, -32019, 6, 'confirmations');
  t.like(below.body.error.data, { asked: 1, min: 2 });
  t.is(calls(list), 0, 'no refused request reached an upstream');
  // Allowed: the same key's write where writes are not denied, and the ops key's one method.
  t.is((await gw.post('/rpc/1337', rpc('eth_sendRawTransaction', [RAW_TX], 7), relayer)).status, 200);
  t.is((await gw.post('/rpc/1337', rpc('eth_chainId', [], 8), ops)).status, 200);
});

test('a key\'s N bounds: the chain\'s N raised to its smallest, lowered to its largest, when the path gives none', async (t) => {
  const { gw, list } = await setup(t, { access: { ...access, anonymous: { maxConfirmations: 1 } }, confirmations: 3 });
  const before = calls(list);
  const relayer = await gw.post('/rpc/1337', pinned(), { authorization: `Bearer ${RELAYER}` });
  t.is(relayer.status, 200, relayer.text);
  t.is(relayer.headers['x-required-confirmations'], '3', 'the chain\'s 3 is within [2, ∞)');
  const dashboard = await gw.post('/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x11)]), { 'x-api-key': DASHBOARD });
  t.is(dashboard.headers['x-required-confirmations'], '2', 'the chain\'s 3 lowered to the key\'s largest');
  const anonymous = await gw.post('/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x12)]));
  t.is(anonymous.headers['x-required-confirmations'], '1', 'the anonymous tier held to N=1');
  t.is(calls(list) - before, 3 + 2 + 1);
});

test('the smallest N raises a chain default below it', async (t) => {
  const { gw, list } = await setup(t);
  const r = await gw.post('/rpc/1337', pinned(), { authorization: `Bearer ${RELAYER}` });
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-required-confirmations'], '2');
  t.is(r.headers['x-confirmable'], 'true');
  t.is(calls(list), 2);
});

test('a batch: a member forbidden alone gets its own 403 with its own id, the others are answered', async (t) => {
  const { gw, list } = await setup(t);
  const r = await gw.post('/rpc/1337', [pinned('a'), rpc('eth_sendRawTransaction', [RAW_TX], 'w'), rpc('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x1' }], 'l'), rpc('eth_chainId', [], 'c')], { 'x-api-key': DASHBOARD });
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.map((m: { id: unknown }) => m.id), ['a', 'w', 'l', 'c']);
  t.truthy(r.body[0].result);
  t.is(r.body[1].error.code, -32019);
  t.is(r.body[1].error.data.reason, 'write');
  t.is(r.body[2].error.code, -32019);
  t.is(r.body[2].error.data.reason, 'method');
  t.is(r.body[3].result, '0x539');
  t.is(r.headers['x-confirmable'], 'false');
  t.false(list.some((f) => f.requests.some((q) => JSON.stringify(q.body).includes('eth_sendRawTransaction'))), 'the forbidden write never went upstream');
});

test('cacheBypass: a key without it is answered from the cache despite Cache-Control: no-cache; a key with it asks the upstreams', async (t) => {
  const { gw, list } = await setup(t);
  await gw.rpc.startHeadTracking().runOnce();
  const dashboard = { 'x-api-key': DASHBOARD };
  const first = await gw.post('/confirmations/2/rpc/1337', pinned(1), dashboard);
  t.is(first.headers['x-cache'], 'MISS', first.text);
  const balanceCalls = () => list.reduce((n, f) => n + f.requests.filter((q) => (q.body as { method?: string }).method === 'eth_getBalance').length, 0);
  t.is(balanceCalls(), 2);
  const held = await gw.post('/confirmations/2/rpc/1337', pinned(2), { ...dashboard, 'cache-control': 'no-cache' });
  t.is(held.headers['x-cache'], 'HIT');
  t.is(balanceCalls(), 2);
  const bypass = await gw.post('/confirmations/2/rpc/1337', pinned(3), { authorization: `Bearer ${RELAYER}`, 'cache-control': 'no-cache' });
  t.is(bypass.headers['x-cache'], 'MISS');
  t.is(balanceCalls(), 4);
});

test('/chains and /metrics are closed to a client key and to no key, open to an admin key; /health and /ready stay open', async (t) => {
  const { gw } = await setup(t);
  for (const path of ['/chains', '/metrics']) {
    refusal(t, await gw.request('GET', path), 401, -32018, null, 'missing');
    refusal(t, await gw.request('GET', path, undefined, { authorization: `Bearer ${RELAYER}` }), 403, -32019, null, 'admin');
    refusal(t, await gw.request('GET', path, undefined, { 'x-api-key': STRANGER }), 401, -32018, null, 'unknown');
    t.is((await gw.request('GET', path, undefined, { authorization: `Bearer ${OPS}` })).status, 200);
  }
  t.is((await gw.request('GET', '/health')).status, 200);
  t.not((await gw.request('GET', '/ready')).status, 401);
});

test('adminRoutes: open leaves /chains and /metrics to anyone', async (t) => {
  const { gw } = await setup(t, { access: { ...access, adminRoutes: 'open' } });
  t.is((await gw.request('GET', '/chains')).status, 200);
  t.is((await gw.request('GET', '/metrics')).status, 200);
});

test('metrics count requests and refusals per key label', async (t) => {
  const { gw } = await setup(t, { access: { ...access, anonymous: { chains: [10] } } });
  await gw.post('/rpc/1337', pinned(), { 'x-api-key': DASHBOARD });
  await gw.post('/rpc/1337', rpc('eth_getLogs', [{}]), { 'x-api-key': DASHBOARD });
  await gw.post('/rpc/1337', [rpc('eth_getLogs', [{}], 1), rpc('eth_getLogs', [{}], 2)], { 'x-api-key': DASHBOARD });
  await gw.post('/rpc/1337', pinned(), { 'x-api-key': STRANGER });
  await gw.post('/rpc/1337', pinned());
  const text = (await gw.request('GET', '/metrics', undefined, { 'x-api-key': OPS })).text;
  t.regex(text, /omnigate_access_requests_total\{key="dashboard"\} 3/);
  t.regex(text, /omnigate_access_refusals_total\{key="dashboard",reason="method"\} 3/);
  t.regex(text, /omnigate_access_refusals_total\{key="none",reason="unknown"\} 1/);
  t.regex(text, /omnigate_access_requests_total\{key="anonymous"\} 1/);
  t.regex(text, /omnigate_access_refusals_total\{key="anonymous",reason="chain"\} 1/);
});

test('a key is never shown: not in logs, metrics, headers, error messages or data, nor sent upstream, whatever the form', async (t) => {
  const { gw, list, lines } = await setup(t, { access: { ...access, adminRoutes: 'open' } });
  const replies: Reply[] = [];
  for (const key of [RELAYER, DASHBOARD, STRANGER]) {
    const forms: [string, Record<string, string>][] = [
      ['/rpc/1337', { authorization: `Bearer ${key}` }],
      ['/rpc/1337', { 'x-api-key': key }],
      [`/rpc/1337/${key}`, {}],
      [`/confirmations/3/rpc/1337/${key}`, {}],
      [`/confirmations/1/rpc/1337/${key}`, {}],
      [`/confirmations/x/rpc/1337/${key}`, {}],
      [`/rpc/10/${key}`, {}],
      [`/rpc/abc/${key}`, {}],
      [`/rpc/999/${key}`, {}],
      [`/finalized/rpc/1337/${key}`, {}],
      // the key where the chain id or <n> goes (as Infura's /v3/KEY), with a key presented or without
      [`/rpc/${key}`, {}],
      [`/rpc/${key}`, { 'x-api-key': key }],
      [`/finalized/rpc/${key}`, { authorization: `Bearer ${key}` }],
      [`/confirmations/${key}/rpc/1337`, { 'x-api-key': key }],
    ];
    for (const [path, headers] of forms) {
      replies.push(await gw.post(path, pinned('k'), headers));
      replies.push(await gw.post(path, [pinned(1), rpc('eth_sendRawTransaction', [RAW_TX], 2), rpc('eth_getLogs', [{}], 3)], headers));
      replies.push(await gw.post(path, '{not json', headers));
      replies.push(await gw.request('GET', path, undefined, headers));
    }
  }
  replies.push(await gw.request('GET', '/metrics'));
  replies.push(await gw.request('GET', '/chains'));
  t.true(replies.some((r) => r.status === 200) && replies.some((r) => r.status === 401) && replies.some((r) => r.status === 403) && replies.some((r) => r.status === 405));
  const shown = [
    ...replies.map((r) => `${r.status} ${JSON.stringify(r.headers)} ${r.text}`),
    ...lines,
    ...list.flatMap((f) => f.requests.map((q) => `${q.path} ${JSON.stringify(q.headers)} ${JSON.stringify(q.body)}`)),
  ].join('\n');
  t.true(lines.length > 0 && shown.includes('/rpc/1337/***'), 'messages show the path with the key masked');
  for (const key of [RELAYER, DASHBOARD, STRANGER]) {
    t.false(shown.includes(key), `the key is nowhere: ${shown.split('\n').filter((l) => l.includes(key)).join('\n').slice(0, 600)}`);
    t.false(shown.includes(key.slice(0, 16)), 'nor a part of it');
  }
});

test('without access: a path with a key segment is not an RPC route (left to the next handler), and no key is asked for', async (t) => {
  const list = await Promise.all([startFakeUpstream()]);
  const gw = await startGateway({ chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  t.teardown(async () => {
    await gw.close();
    await list[0]!.close();
  });
  t.is((await gw.post('/rpc/1337', pinned())).status, 200);
  t.is((await gw.post(`/rpc/1337/${RELAYER}`, pinned())).status, 404);
  t.is((await gw.request('GET', '/chains')).status, 200);
  t.is(list[0]!.calls, 1);
});

/** A Postman request with the collection's variables put in, sent as Postman would send it. */
interface PostmanItem {
  name: string;
  request: { method: string; header: { key: string; value: string }[]; body: { raw: string }; url: { raw: string } };
}
const fill = (text: string, vars: Record<string, string>) => text.replace(/\{\{(\w+)\}\}/g, (_, k: string) => vars[k] ?? `{{${k}}}`);

test('the Postman collection asks for the key: an apiKey variable and X-Api-Key on every request; filled in it is served, left empty it is refused', async (t) => {
  const { gw, list } = await setup(t);
  const collection = await gw.request('GET', '/collection.json');
  t.is(collection.status, 200, 'open without a key');
  const body = collection.body as { variable: { key: string; value: string }[]; item: { item: PostmanItem[] }[] };
  const apiKey = body.variable.find((v) => v.key === 'apiKey');
  t.deepEqual(apiKey && { key: apiKey.key, value: apiKey.value }, { key: 'apiKey', value: '' }, 'a variable for the key, empty: no key is written in it');
  const items = body.item.flatMap((f) => f.item);
  t.true(items.length > 20);
  for (const item of items) t.deepEqual(item.request.header.filter((h) => h.key === 'X-Api-Key'), [{ key: 'X-Api-Key', value: '{{apiKey}}' }], item.name);

  const vars = { ...Object.fromEntries(body.variable.map((v) => [v.key, v.value])), chainId: '1337' };
  const send = (item: PostmanItem, key: string) => {
    const url = new URL(fill(item.request.url.raw, { ...vars, apiKey: key }));
    const headers = Object.fromEntries(item.request.header.map((h) => [h.key.toLowerCase(), fill(h.value, { ...vars, apiKey: key })]));
    return gw.request(item.request.method, url.pathname, item.request.body.raw, headers);
  };
  const chainId = items.find((i) => i.name === 'eth_chainId')!;
  const before = calls(list);
  const refused = await send(chainId, '');
  t.is(refused.status, 401, refused.text);
  t.is(refused.body.error.code, -32018);
  t.is(calls(list), before, 'no upstream call for the refused one');
  const served = await send(chainId, DASHBOARD);
  t.is(served.status, 200, served.text);
  t.is(served.body.result, '0x539');
});

test('a key differing from a configured one in its last character and one differing in its first are refused the same way: 401 unknown, identical answers', async (t) => {
  const { gw, list } = await setup(t);
  const last = `${RELAYER.slice(0, -1)}${RELAYER.endsWith('X') ? 'Y' : 'X'}`;
  const first = `${RELAYER.startsWith('X') ? 'Y' : 'X'}${RELAYER.slice(1)}`;
  const unrelated = 'Z'.repeat(RELAYER.length);
  // What an answer says, less what differs between any two answers (the date, the request id).
  const shape = (r: Reply) => ({ status: r.status, body: r.body as unknown, headers: Object.fromEntries(Object.entries(r.headers).filter(([k]) => k !== 'date' && k !== 'x-request-id')) });
  const forms: [string, (key: string) => Promise<Reply>][] = [
    ['Bearer', (key) => gw.post('/rpc/1337', pinned(1), { authorization: `Bearer ${key}` })],
    ['X-Api-Key', (key) => gw.post('/rpc/1337', pinned(1), { 'x-api-key': key })],
    ['path', (key) => gw.post(`/rpc/1337/${key}`, pinned(1))],
  ];
  for (const [form, send] of forms) {
    const answers = [await send(last), await send(first), await send(unrelated)];
    for (const r of answers) refusal(t, r, 401, -32018, 1, 'unknown');
    t.deepEqual(shape(answers[0]!), shape(answers[1]!), `${form}: last and first character`);
    t.deepEqual(shape(answers[0]!), shape(answers[2]!), `${form}: as a key sharing nothing with it`);
    t.is((await send(RELAYER)).status, 200, `${form}: the key itself is served`);
  }
  const metrics = await gw.request('GET', '/metrics', undefined, { 'x-api-key': OPS });
  t.regex(metrics.text, /omnigate_access_refusals_total\{key="none",reason="unknown"\} 9/);
  t.true(calls(list) > 0);
});
