/**
 * Two `omnigate serve` replicas behind a real nginx, sharing one real Redis, as the README's
 * deployment shows (lib/cache/README.md "Replicas"): an answer confirmed through one replica is
 * served by the other with zero upstream calls; a replica killed under load loses no request
 * that had not reached it (nginx sends it to the other); a SIGTERM'd replica drains: requests
 * that reached it finish, new ones go to the other; two replicas of two workers each spend one
 * budget in Redis, however many requests race for its last credits.
 */
import test, { type ExecutionContext } from 'ava';
import { finalizedChain, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { accepts } from '../../support/procs.js';
import { rpc, send, type Reply } from '../../support/gateway.js';
import { listeningPort, runCli, type Run, configFile, chainLines, relayerKeyLines } from '../../support/cli.js';
import { hasRedis, redisServer, startRedis, type TestRedis } from '../../support/redis.js';
import { hasNginx, nginxBin, startNginx } from '../../support/nginx.js';
import { until } from '../../support/wait.js';

const ADDRESS = '0x00000000000000000000000000000000000000aa';
const hex = (n: number) => `0x${n.toString(16)}`;

/** A chain at block 100, finalized 90. */
const chainAnswer = finalizedChain(() => 90);

async function upstreams(t: ExecutionContext, delayMs = 0): Promise<FakeUpstream[]> {
  const list = await Promise.all([0, 1, 2].map(() => startFakeUpstream({ answer: chainAnswer, delayMs })));
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  return list;
}

async function replicas(t: ExecutionContext, list: FakeUpstream[], redis: TestRedis): Promise<{ runs: Run[]; ports: number[] }> {
  const file = await configFile(t, [
    'port: 0',
    'refreshInterval: 60',
    'heads: { intervalMs: 500 }',
    'server: { shutdownMs: 10000 }',
    'cache:',
    '  redis:',
    `    url: ${redis.url}`,
    '    hmacKey: ${OMNIGATE_CACHE_KEY}',
    '    prefix: "replicas-test:"',
    '    timeoutMs: 500',
    ...chainLines(list),
    '',
  ].join('\n'), 'omnigate-replicas-');
  const env = { OMNIGATE_CACHE_KEY: 'replicas-test-key-0123456789' };
  const runs = [runCli(['serve', '--config', file, '--no-indexer'], env, { t }), runCli(['serve', '--config', file, '--no-indexer'], env, { t })];
  const ports = await Promise.all(runs.map((r) => listeningPort(r)));
  // Ready once the cache's Redis is connected and the finalized head is known.
  for (const port of ports) {
    await until(async () => (await send(`http://127.0.0.1:${port}`, 'GET', '/ready')).body?.checks?.cache?.redis === 'ready');
    await until(async () => ((await send(`http://127.0.0.1:${port}`, 'GET', '/chains')).body as { heads?: { finalized?: string | null } }[])[0]?.heads?.finalized != null);
  }
  return { runs, ports };
}

const post = (base: string, body: unknown): Promise<Reply> => send(base, 'POST', '/confirmations/2/rpc/1337', JSON.stringify(body), { 'content-type': 'application/json' });
const balances = (list: FakeUpstream[]) => list.reduce((n, f) => n + f.requests.filter((r) => (r.body as { method?: string }).method === 'eth_getBalance').length, 0);

if (hasRedis() && hasNginx()) {
  test.serial('an answer confirmed through one replica is served by the other from Redis, with no upstream call', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t);
    const { ports } = await replicas(t, list, redis);
    const [a, b] = ports.map((p) => `http://127.0.0.1:${p}`);
    const first = await post(a!, rpc('eth_getBalance', [ADDRESS, hex(0x10)], 1));
    t.is(first.status, 200, first.text);
    t.is(first.headers['x-cache'], 'MISS');
    t.is(balances(list), 2);
    let second: Reply | undefined;
    await until(async () => {
      second = await post(b!, rpc('eth_getBalance', [ADDRESS, hex(0x10)], 'b'));
      return second.headers['x-cache'] === 'HIT';
    });
    t.is(second!.body.id, 'b');
    t.is(second!.body.result, first.body.result);
    t.is(second!.headers['x-checked-urls'], first.headers['x-checked-urls']);
    t.is(balances(list), 2, 'the second replica asked no upstream');
  });

  test.serial('a replica killed under load behind nginx loses no request that had not reached it', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t);
    const { runs, ports } = await replicas(t, list, redis);
    const nginx = await startNginx(t, ports);
    let i = 0;
    const results: Reply[] = [];
    // Four clients in a loop; the kill comes after 20 answers, and the load goes on for 20 more
    // (counted, not timed: a loaded machine makes the run longer, not thinner).
    let killedAt: number | undefined;
    const worker = async () => {
      while (killedAt === undefined || results.length < killedAt + 20) results.push(await post(nginx.url, rpc('eth_getBalance', [ADDRESS, hex(0x20 + (i++ % 40))], i)));
    };
    const load = Promise.all([0, 1, 2, 3].map(() => worker()));
    await until(() => results.length >= 20);
    killedAt = results.length;
    runs[0]!.child.kill('SIGKILL');
    await load;
    t.true(results.slice(0, killedAt).every((r) => r.status === 200), 'every request before the kill answered');
    // A request in flight on the killed replica when it died had reached it: nginx does not send
    // it twice, and the client gets 502. Every other request was answered.
    const failed = results.filter((r) => r.status !== 200);
    t.true(failed.length <= 4, `${failed.length} failed of ${results.length}: at most the 4 in flight at the kill`);
    for (const r of failed) t.is(r.status, 502);
    const after = await post(nginx.url, rpc('eth_getBalance', [ADDRESS, hex(0x50)], 'after'));
    t.is(after.status, 200, 'the other replica answers');
  });

  test.serial('a SIGTERM\'d replica drains: the requests that reached it finish, new ones go to the other', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t, 600);
    const { runs, ports } = await replicas(t, list, redis);
    const nginx = await startNginx(t, ports);
    const a = `http://127.0.0.1:${ports[0]}`;
    // Slow requests that reached replica A (each call takes 600 ms upstream).
    const inFlight = [0, 1, 2].map((k) => post(a, rpc('eth_getBalance', [ADDRESS, hex(0x30 + k)], `in-flight-${k}`)));
    // (SIGTERM once the three reached replica A: their calls are at the upstreams)
    const asked = (block: string) => list.some((f) => f.requests.some((r) => (r.body as { params?: unknown[] } | undefined)?.params?.[1] === block));
    await until(() => [0, 1, 2].every((k) => asked(hex(0x30 + k))));
    runs[0]!.child.kill('SIGTERM');
    // Once it stopped listening, nginx's connection to it is refused and the request goes on to
    // the other. (A request written on a kept-alive connection in the instant the replica closes
    // it can get nginx's 502: see lib/cache/README.md "Replicas".)
    await until(async () => !(await accepts(ports[0]!)));
    const fresh = await Promise.all([0, 1, 2, 3].map((k) => post(nginx.url, rpc('eth_getBalance', [ADDRESS, hex(0x40 + k)], `new-${k}`))));
    for (const [k, r] of (await Promise.all(inFlight)).entries()) {
      t.is(r.status, 200, r.text);
      t.is(r.body.id, `in-flight-${k}`);
    }
    for (const r of fresh) t.is(r.status, 200, r.text);
    t.is(await runs[0]!.exited, 0, 'the drained replica exits 0');
  });
  test.serial('two replicas of two workers each, one budget in Redis: forty requests at once for five balances admit five', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t);
    const key = 'replicas-budget-key-0123456789';
    const file = await configFile(t, [
      'port: 0',
      'refreshInterval: 60',
      'confirmations: 1',
      'server: { shutdownMs: 10000 }',
      'cache:',
      '  redis:',
      `    url: ${redis.url}`,
      '    hmacKey: ${OMNIGATE_CACHE_KEY}',
      '    prefix: "replicas-budget:"',
      '    timeoutMs: 2000',
      'access:',
      // The budgets' Redis given a timeout a loaded machine does not outrun: past it a process
      // grants from its own bucket (as documented), which is not what this test is about.
      `  redis: { url: "${redis.url}", prefix: "replicas-budget:", timeoutMs: 10000 }`,
      ...relayerKeyLines(key),
      ...chainLines(list),
      '',
    ].join('\n'), 'omnigate-replicas-');
    const env = { OMNIGATE_CACHE_KEY: 'replicas-test-key-0123456789' };
    const runs = [0, 1].map(() => runCli(['serve', '--config', file, '--no-indexer', '--workers', '2'], env, { t }));
    const bases = (await Promise.all(runs.map((r) => listeningPort(r)))).map((p) => `http://127.0.0.1:${p}`);
    // Every worker's budgets connected to Redis (a new connection each time reaches either worker).
    for (const base of bases) {
      let streak = 0;
      await until(async () => {
        const ready = (await send(base, 'GET', '/ready', undefined, { connection: 'close' })).body?.checks?.budgets?.redis === 'ready';
        streak = ready ? streak + 1 : 0;
        return streak >= 8;
      });
    }
    // Balances at N=1 cost 20 credits each: the day holds five, however the requests race over the four processes.
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      send(bases[i % 2]!, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_getBalance', [ADDRESS, hex(0x10 + i)], i)), { 'content-type': 'application/json', connection: 'close', 'x-api-key': key })));
    const admitted = replies.filter((r) => r.status === 200);
    t.is(admitted.length, 5, replies.map((r) => r.status).join(' '));
    t.true(admitted.every((r) => r.headers['x-credits'] === '20'));
    t.true(replies.filter((r) => r.status !== 200).every((r) => r.status === 429 && (r.body as { error: { data: { reason: string } } }).error.data.reason === 'day'));
    t.is(balances(list), 5, 'five balances asked upstream, no more');
  });
} else {
  test('the replica tests need redis-server and nginx', (t) => {
    const fix = 'install them (apt-get install redis-server nginx) or set OMNIGATE_REDIS_SERVER / OMNIGATE_NGINX';
    const missing = [hasRedis() ? '' : redisServer, hasNginx() ? '' : nginxBin].filter(Boolean).join(' and ');
    if (process.env.OMNIGATE_REQUIRE_REDIS === '1' || process.env.OMNIGATE_REQUIRE_NGINX === '1') {
      t.fail(`a replica test needs ${missing}, which does not run here: ${fix}`);
      return;
    }
    const message = `SKIPPED the replica tests: ${missing} does not run here; ${fix}`;
    console.warn(`\n*** ${message} ***\n`);
    t.log(message);
    t.pass();
  });
}
