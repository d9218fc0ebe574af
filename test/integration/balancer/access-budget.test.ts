/**
 * The budgets in credits (lib/access/budget.ts, middleware/budget.ts) on the wire, with the
 * memory store: what an answer costs as X-Credits (N=3 three times N=1, a cache hit the key's
 * price, a batch the sum of its members, a broadcast write estimated at its upstreams), the per-day budget spent (429, -32020 with the client's
 * id, Retry-After), the per-second bucket refilled, the concurrency limit and its slot freed after
 * an answer, an upstream error and a client that went away; a batch whose client left charged
 * the calls its members made; credits and refusals per key in /metrics; the key never shown; a
 * key without a budget answered without credit headers; the refusals before the budget (a 403
 * for the route's N, a body that is not JSON, an unknown chain) answered without them, a call
 * refused after it charged the least.
 */
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import type { Logger, LogFn } from '../../../lib/log.js';
import { transactionHash } from '../../../lib/jsonrpc/writes.js';
import { defaultAnswer, finalizedChain, startFakeUpstream, type AnswerFn, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway, type Reply } from '../../support/gateway.js';
import { until as waitUntil } from '../../support/wait.js';

const METERED = 'metered-key-0123456789abcdef';
const DAILY = 'daily-key-0123456789abcdef00';
const SECOND = 'second-key-0123456789abcdef0';
const SINGLE = 'single-key-0123456789abcdef0';
const FREE = 'free-key-0123456789abcdef000';
const OPS = 'ops-key-00112233445566778899';
const NARROW = 'narrow-key-0123456789abcdef0';
const KEYS = [METERED, DAILY, SECOND, SINGLE, FREE, OPS, NARROW];
const ADDRESS = '0x00000000000000000000000000000000000000aa';
const hex = (n: number) => `0x${n.toString(16)}`;

/** A chain at block 100, finalized 90: a balance at a block up to 90 is cached once confirmed. */
const finalized = finalizedChain(() => 90);
const RAW_TX = '0x02f8730180843b9aca00850c92a69c0082520894000000000000000000000000000000000000dead880de0b6b3a764000080c001a0' + '11'.repeat(32) + 'a0' + '22'.repeat(32);
const chainAnswer: AnswerFn = (call) => {
  if (call.method === 'eth_sendRawTransaction') return { result: transactionHash(Buffer.from(String(call.params![0]).slice(2), 'hex')) ?? null };
  return call.method === 'eth_getBalance' ? defaultAnswer(call) : finalized(call);
};

function recordingLogger(lines: string[]): Logger {
  const log: LogFn = ((obj: unknown, msg?: string) => lines.push(JSON.stringify({ obj, msg }))) as LogFn;
  const logger: Logger = { debug: log, info: log, warn: log, error: log, child: (b) => (lines.push(JSON.stringify(b)), logger) };
  return logger;
}

const access = {
  keys: [
    { label: 'metered', key: METERED, creditsPerDay: 1_000_000, cacheHitCredits: 2 },
    { label: 'daily', key: DAILY, creditsPerDay: 50 },
    { label: 'second', key: SECOND, creditsPerSecond: 20, creditsPerDay: 1_000_000 },
    { label: 'single', key: SINGLE, maxConcurrent: 1 },
    { label: 'free', key: FREE },
    { label: 'ops', key: OPS, admin: true },
    { label: 'narrow', key: NARROW, creditsPerDay: 100, maxConfirmations: 2, denyMethods: ['eth_getLogs'] },
  ],
};

/**
 * No hedged second call: an upstream slower than the hedge delay (any, on a loaded machine) would
 * make a call at N=1 cost two, and the credits these tests count would depend on the machine.
 */
const NO_HEDGE = { hedgeMs: 0 };

async function setup(t: ExecutionContext, hold?: (body?: unknown) => Promise<unknown> | undefined): Promise<{ list: FakeUpstream[]; gw: Gateway; lines: string[] }> {
  const list = await Promise.all([0, 1, 2].map(() => startFakeUpstream({ answer: chainAnswer, ...(hold && { hold }) })));
  const lines: string[] = [];
  const gw = await startGateway({ refreshInterval: 3600, timeouts: NO_HEDGE, access, chains: { 1337: { rpcs: list.map((f) => f.url) } } }, { logger: recordingLogger(lines) });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  return { list, gw, lines };
}

const as = (key: string) => ({ authorization: `Bearer ${key}` });
/** A balance at its own block (a distinct question each: never a cache hit unless asked again). */
const balance = (block: number, id: unknown = block) => rpc('eth_getBalance', [ADDRESS, hex(block)], id);
const credits = (r: Reply) => Number(r.headers['x-credits']);

const until = (ok: () => boolean | Promise<boolean>, ms = 20_000) => waitUntil(ok, ms, 10);

test('an answer costs its weight × the upstream calls it took: N=3 three times N=1, and says what the day has left', async (t) => {
  const { gw, list } = await setup(t);
  const calls = () => list.reduce((n, f) => n + f.calls, 0);
  const before = calls();
  const one = await gw.post('/confirmations/1/rpc/1337', balance(0x11), as(METERED));
  t.is(one.status, 200, one.text);
  t.is(calls() - before, 1);
  const mid = calls();
  const three = await gw.post('/confirmations/3/rpc/1337', balance(0x12), as(METERED));
  t.is(three.status, 200, three.text);
  t.is(calls() - mid, 3);
  t.is(credits(one), 20, 'eth_getBalance weighs 20');
  t.is(credits(three), 3 * credits(one));
  t.is(three.headers['x-credits-remaining-day'], String(1_000_000 - 20 - 60));
  t.is(three.headers['x-credits-remaining-second'], undefined, 'no per-second limit: no header');
});

test('a write costs its weight × the upstreams it was sent to, whatever the route\'s N', async (t) => {
  const { gw, list } = await setup(t);
  const sends = () => list.reduce((n, f) => n + f.requests.filter((q) => (q.body as { method?: string }).method === 'eth_sendRawTransaction').length, 0);
  const r = await gw.post('/confirmations/3/rpc/1337', rpc('eth_sendRawTransaction', [RAW_TX], 'w'), as(METERED));
  t.is(r.status, 200, r.text);
  t.is(sends(), 1, 'a write goes to one upstream');
  t.is(credits(r), 40 * sends());
  t.is(r.headers['x-credits-remaining-day'], String(1_000_000 - 40), 'the estimate at N=3 refunded down to the one call');
});

test('a write on a chain that broadcasts is estimated at every upstream it goes to: a day that cannot hold that refuses it', async (t) => {
  const list = await Promise.all([0, 1, 2].map(() => startFakeUpstream({ answer: chainAnswer })));
  const gw = await startGateway({
    refreshInterval: 3600,
    access: { keys: [{ label: 'small', key: DAILY, creditsPerDay: 100 }, { label: 'enough', key: METERED, creditsPerDay: 120 }] },
    chains: { 1337: { rpcs: list.map((f) => f.url), writes: { broadcast: 'all' } } },
  });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  const sends = () => list.reduce((n, f) => n + f.requests.filter((q) => (q.body as { method?: string }).method === 'eth_sendRawTransaction').length, 0);
  // Three upstreams at 40 credits each: 120, more than the 100 the day holds; refused before any call.
  const refused = await gw.post('/rpc/1337', rpc('eth_sendRawTransaction', [RAW_TX], 'w1'), as(DAILY));
  t.is(refused.status, 429, refused.text);
  t.is(refused.body.error.data.reason, 'day');
  t.is(sends(), 0);
  // A day of 120 holds it, and the write costs just that.
  const sent = await gw.post('/rpc/1337', rpc('eth_sendRawTransaction', [RAW_TX], 'w2'), as(METERED));
  t.is(sent.status, 200, sent.text);
  await until(() => sends() === 3);
  t.is(credits(sent), 120);
  t.is(sent.headers['x-credits-remaining-day'], '0');
});

test('a cache hit costs the key\'s cacheHitCredits, whatever the method and N', async (t) => {
  const { gw } = await setup(t);
  await gw.rpc.startHeadTracking().runOnce(); // the finalized block known: a final answer is kept
  const miss = await gw.post('/confirmations/2/rpc/1337', balance(0x10, 'a'), as(METERED));
  t.is(miss.headers['x-cache'], 'MISS');
  t.is(credits(miss), 40);
  const hit = await gw.post('/confirmations/2/rpc/1337', balance(0x10, 'b'), as(METERED));
  t.is(hit.headers['x-cache'], 'HIT', hit.text);
  t.is(hit.body.id, 'b');
  t.is(credits(hit), 2);
  t.is(hit.headers['x-credits-remaining-day'], String(1_000_000 - 42));
});

test('a batch costs the sum of its members', async (t) => {
  const { gw } = await setup(t);
  const a = await gw.post('/confirmations/2/rpc/1337', balance(0x21), as(METERED));
  const b = await gw.post('/confirmations/2/rpc/1337', rpc('eth_blockNumber', [], 'bn'), as(METERED));
  t.is(a.status, 200, a.text);
  t.is(b.status, 200, b.text);
  const batch = await gw.post('/confirmations/2/rpc/1337', [balance(0x22), rpc('eth_blockNumber', [], 'bn2')], as(METERED));
  t.is(batch.status, 200, batch.text);
  t.is(batch.body.length, 2);
  t.is(credits(batch), credits(a) + credits(b));
  t.true(credits(b) < credits(a), 'eth_blockNumber (10, one upstream) is cheaper than a confirmed balance');
});

test('the day spent: 429, a JSON-RPC error -32020 with the client\'s id, Retry-After to midnight UTC, X-Credits 0', async (t) => {
  const { gw, list } = await setup(t);
  const first = await gw.post('/confirmations/1/rpc/1337', balance(0x31), as(DAILY));
  const second = await gw.post('/confirmations/1/rpc/1337', balance(0x32), as(DAILY));
  t.is(first.status, 200);
  t.is(second.status, 200);
  t.is(second.headers['x-credits-remaining-day'], '10');
  const calls = list.reduce((n, f) => n + f.calls, 0);
  const refused = await gw.post('/confirmations/1/rpc/1337', balance(0x33, 'over'), as(DAILY));
  t.is(refused.status, 429, refused.text);
  t.is(refused.headers['content-type'], 'application/json');
  t.is(refused.body.id, 'over');
  t.is(refused.body.error.code, -32020);
  t.is(refused.body.error.data.reason, 'day');
  t.is(refused.body.error.data.key, 'daily');
  const now = Date.now();
  const toMidnight = Math.ceil((Math.floor(now / 86_400_000 + 1) * 86_400_000 - now) / 1000);
  const retry = Number(refused.headers['retry-after']);
  t.true(retry >= 1 && retry <= toMidnight + 1, `Retry-After ${retry}, ${toMidnight} s to midnight`);
  t.is(refused.body.error.data.retryAfter, retry);
  t.is(refused.headers['x-credits'], '0');
  t.is(refused.headers['x-credits-remaining-day'], '10');
  t.is(list.reduce((n, f) => n + f.calls, 0), calls, 'refused before any upstream call');
  // A cheaper call that still fits is served.
  const small = await gw.post('/confirmations/1/rpc/1337', rpc('eth_blockNumber', [], 'small'), as(DAILY));
  t.is(small.status, 200, small.text);
  t.is(small.headers['x-credits-remaining-day'], '0');
  const batch = await gw.post('/confirmations/1/rpc/1337', [balance(0x34, 'x'), balance(0x35, 'y')], as(DAILY));
  t.is(batch.status, 429);
  t.is(batch.body.id, null, 'a batch refused as a whole has no one id');
});

test('the per-second bucket: spent, refused with Retry-After 1, admitted again a second later', async (t) => {
  const { gw } = await setup(t);
  // The bucket holds 20 credits (its burst is its rate): one balance at N=1 spends it. Two sent
  // at once (not one after the other: a slow machine could take the refill time between them):
  // one is admitted and spends the bucket, the other is refused, whichever comes first.
  const both = await Promise.all(['first', 'fast'].map((id, i) => gw.post('/confirmations/1/rpc/1337', balance(0x41 + i, id), as(SECOND))));
  t.deepEqual(both.map((r) => r.status).sort(), [200, 429], both.map((r) => r.text).join(' | '));
  const a = both.find((r) => r.status === 200)!;
  const refused = both.find((r) => r.status === 429)!;
  t.is(credits(a), 20);
  t.is(refused.body.id, refused === both[0] ? 'first' : 'fast', 'the refusal carries its own request\'s id');
  t.is(refused.body.error.data.reason, 'second');
  t.is(refused.headers['retry-after'], '1');
  t.true(Number(refused.headers['x-credits-remaining-second']) < 20, `${refused.headers['x-credits-remaining-second']} left: less than one call`);
  await new Promise((r) => setTimeout(r, 1_100));
  const again = await gw.post('/confirmations/1/rpc/1337', balance(0x43, 'later'), as(SECOND));
  t.is(again.status, 200, again.text);
  t.is(again.body.id, 'later');
  t.is(credits(again), 20);
});

/** A request whose client goes away once its upstream calls started. */
function abandoned(gw: Gateway, body: unknown, headers: Record<string, string>): http.ClientRequest {
  const req = http.request(`${gw.url}/confirmations/1/rpc/1337`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, agent: false });
  req.on('error', () => {});
  req.end(JSON.stringify(body));
  return req;
}

test('maxConcurrent: a second request in flight is refused (concurrent); the slot is freed after an answer, an upstream error and a client gone', async (t) => {
  // The upstreams hold their answers while a gate is set (not for a time: a slow machine could
  // outrun it, and the request meant to be in flight would be over).
  let gate: Promise<void> | undefined;
  let open = () => {};
  const shut = () => (gate = new Promise<void>((resolve) => (open = () => (gate = undefined, resolve()))));
  const { gw, list } = await setup(t, () => gate);
  const calls = () => list.reduce((n, f) => n + f.calls, 0);
  shut();
  let before = calls();
  const held = gw.post('/confirmations/1/rpc/1337', balance(0x51, 'held'), as(SINGLE));
  await until(() => calls() > before);
  const second = await gw.post('/confirmations/1/rpc/1337', balance(0x52, 'second'), as(SINGLE));
  t.is(second.status, 429, second.text);
  t.is(second.body.id, 'second');
  t.is(second.body.error.data.reason, 'concurrent');
  t.is(second.headers['retry-after'], '1');
  open();
  t.is((await held).status, 200);
  t.is((await gw.post('/confirmations/1/rpc/1337', balance(0x53), as(SINGLE))).status, 200, 'freed after an answer');

  // An upstream error: the slot is freed, and the error answer says what it cost.
  for (const f of list) f.profile = 'error500';
  const failed = await gw.post('/confirmations/1/rpc/1337', balance(0x54, 'err'), as(SINGLE));
  t.true(failed.status >= 500, failed.text);
  t.is(failed.body.id, 'err');
  t.true(credits(failed) >= 1, `X-Credits ${failed.headers['x-credits']} on an error answer`);
  for (const f of list) f.profile = 'honest';
  t.is((await gw.post('/confirmations/1/rpc/1337', balance(0x55), as(SINGLE))).status, 200, 'freed after an upstream error');

  // A client gone while its request waits on the upstreams.
  shut();
  before = calls();
  const gone = abandoned(gw, balance(0x56), as(SINGLE));
  await until(() => calls() > before);
  gone.destroy();
  await until(() => list.reduce((n, f) => n + f.aborted, 0) > 0);
  open();
  const after = await gw.post('/confirmations/1/rpc/1337', balance(0x57, 'after'), as(SINGLE));
  t.is(after.status, 200, `freed after the client went away: ${after.text}`);
  t.is(after.body.id, 'after');
});

test('a batch whose client leaves mid-run is charged the upstream calls its members made, not 1 a member', async (t) => {
  // The upstreams hold the members' calls until the client left (a gate, not a delay that a slow
  // machine could outrun); opened at the end so that nothing stays held.
  let open = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  const isBalance = (body: unknown) => ([body].flat() as { method?: string }[]).some((b) => b?.method === 'eth_getBalance');
  const { gw, list } = await setup(t, (body?: unknown) => (isBalance(body) ? gate : undefined));
  t.teardown(() => open());
  // Members' calls, whether sent one by one or in an upstream batch.
  const balanceCalls = () => list.reduce((n, f) => n + f.requests.flatMap((r) => [r.body].flat() as { method?: string }[]).filter((b) => b.method === 'eth_getBalance').length, 0);
  const req = http.request(`${gw.url}/confirmations/3/rpc/1337`, { method: 'POST', headers: { 'content-type': 'application/json', ...as(METERED) }, agent: false });
  req.on('error', () => {});
  req.end(JSON.stringify([balance(0x81), balance(0x82), balance(0x83)]));
  // Three members at N=3: nine calls on their way to the upstreams, then the client leaves.
  await until(() => balanceCalls() === 9);
  req.destroy();
  await until(() => list.reduce((n, f) => n + f.aborted, 0) > 0);
  const spent = async () => {
    const metrics = await gw.request('GET', '/metrics', undefined, as(OPS));
    return Number(/omnigate_access_credits_total\{key="metered"\} (\d+)/.exec(metrics.text)?.[1] ?? 0);
  };
  await until(async () => (await spent()) > 0);
  t.is(await spent(), 9 * 20, 'nine eth_getBalance calls at 20 credits each');
});

test('per key in /metrics: credits spent and budget refusals, by label; the key is in no header, log line or metric', async (t) => {
  const { gw, lines } = await setup(t);
  const replies: Reply[] = [];
  for (let i = 0; i < 4; i++) replies.push(await gw.post('/confirmations/1/rpc/1337', balance(0x61 + i), as(DAILY)));
  replies.push(await gw.post(`/confirmations/1/rpc/1337/${METERED}`, balance(0x70), {}));
  replies.push(await gw.post('/confirmations/1/rpc/1337', balance(0x71), { 'x-api-key': SECOND }));
  replies.push(await gw.post('/confirmations/1/rpc/1337', balance(0x72), { 'x-api-key': SECOND }));
  t.deepEqual(replies.map((r) => r.status), [200, 200, 429, 429, 200, 200, 429]);
  const metrics = await gw.request('GET', '/metrics', undefined, as(OPS));
  t.is(metrics.status, 200);
  t.regex(metrics.text, /omnigate_access_credits_total\{key="daily"\} 40\n/);
  t.regex(metrics.text, /omnigate_access_credits_total\{key="metered"\} 20\n/);
  t.regex(metrics.text, /omnigate_access_refusals_total\{key="daily",reason="day"\} 2\n/);
  t.regex(metrics.text, /omnigate_access_requests_total\{key="daily"\} 4\n/);
  t.regex(metrics.text, /omnigate_access_refusals_total\{key="second",reason="second"\} 1\n/);
  t.notRegex(metrics.text, /omnigate_access_credits_total\{key="ops"\}/, 'a key without a budget is not charged');
  const shown = [metrics.text, ...lines, ...replies.flatMap((r) => [r.text, JSON.stringify(r.headers)])].join('\n');
  for (const key of KEYS) t.false(shown.includes(key), 'the key is never shown');
});

test('a key without a budget is served without credit headers or charge', async (t) => {
  const { gw } = await setup(t);
  const r = await gw.post('/confirmations/1/rpc/1337', balance(0x81), as(FREE));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-credits'], undefined);
  t.is(r.headers['x-credits-remaining-day'], undefined);
  const cors = await gw.post('/confirmations/1/rpc/1337', balance(0x82), { ...as(METERED), origin: 'https://app.example' });
  t.regex(String(cors.headers['access-control-expose-headers']), /X-Credits, X-Credits-Remaining-Second, X-Credits-Remaining-Day, Retry-After/);
  t.is(cors.headers['x-credits'], '20');
});

test('what the budget never saw carries no credit headers and costs nothing: a 403 for the route\'s N, a body that is not JSON, an unknown chain; a call refused after it costs the least, 1', async (t) => {
  const { gw } = await setup(t);
  const tooMany = await gw.post('/confirmations/3/rpc/1337', balance(0x70), as(NARROW));
  t.is(tooMany.status, 403, tooMany.text);
  t.is(tooMany.body.error.data.reason, 'confirmations');
  const notJson = await gw.request('POST', '/rpc/1337', '{"jsonrpc":', { 'content-type': 'application/json', ...as(NARROW) });
  t.is(notJson.status, 400, notJson.text);
  t.is(notJson.body.error.code, -32700);
  const unknownChain = await gw.post('/rpc/999', balance(0x71), as(NARROW));
  t.is(unknownChain.status, 404, unknownChain.text);
  for (const r of [tooMany, notJson, unknownChain]) {
    t.is(r.headers['x-credits'], undefined, r.text);
    t.is(r.headers['x-credits-remaining-day'], undefined, r.text);
  }
  const method = await gw.post('/rpc/1337', rpc('eth_getLogs', [{}], 1), as(NARROW));
  t.is(method.status, 403, method.text);
  t.is(method.body.error.data.reason, 'method');
  t.is(method.headers['x-credits'], '1');
  t.is(method.headers['x-credits-remaining-day'], '99', 'the refusals before it took nothing');
  const badParams = await gw.post('/rpc/1337', rpc('eth_getBlockByNumber', ['0x1'], 2), as(NARROW));
  t.is(badParams.status, 200, badParams.text);
  t.is(badParams.body.error.code, -32602);
  t.is(badParams.headers['x-credits'], '1');
  t.is(badParams.headers['x-credits-remaining-day'], '98');
});

test('the anonymous tier has a budget of its own', async (t) => {
  const list = await Promise.all([0].map(() => startFakeUpstream({ answer: chainAnswer })));
  const gw = await startGateway({ refreshInterval: 3600, timeouts: NO_HEDGE, access: { keys: [{ label: 'ops', key: OPS, admin: true }], anonymous: { creditsPerDay: 30 } }, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  const first = await gw.post('/rpc/1337', balance(0x91), {});
  t.is(first.status, 200, first.text);
  t.is(first.headers['x-credits-remaining-day'], '10');
  const second = await gw.post('/rpc/1337', balance(0x92, 'anon'), {});
  t.is(second.status, 429);
  t.is(second.body.error.data.key, 'anonymous');
  t.is((await gw.post('/rpc/1337', balance(0x93), as(OPS))).headers['x-credits'], undefined, 'the ops key has no budget');
});

test('shutdown: a request in flight when the pipeline closes is answered -32015 and settles (its X-Credits)', async (t) => {
  const { gw, list } = await setup(t);
  for (const f of list) f.delayMs = 5_000;
  const before = list.reduce((n, f) => n + f.calls, 0);
  const held = gw.post('/confirmations/1/rpc/1337', balance(0xa1, 'held'), as(SINGLE));
  await until(() => list.reduce((n, f) => n + f.calls, 0) > before);
  await gw.rpc.close();
  const r = await held;
  t.is(r.status, 503, r.text);
  t.is(r.body.id, 'held');
  t.is(r.body.error.code, -32015);
  // Settled at 20 per upstream call the agreement started (the cut calls, and any it went on to).
  const cost = Number(r.headers['x-credits']);
  t.true(cost >= 20 && cost % 20 === 0, `X-Credits ${r.headers['x-credits']}`);
});
