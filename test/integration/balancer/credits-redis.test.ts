/**
 * The credit budgets on a real redis-server: two stores (two connections, as two replicas) share
 * one budget exactly, whatever their clocks' skew; every key they write expires and names no
 * client key; Redis killed: each decides from its own local bucket, says so once, and shares
 * again once Redis is back. A Redis URL's password is logged by neither these stores nor the
 * cache's, wherever the URL gives it.
 */
import test, { type ExecutionContext } from 'ava';
import { Redis } from 'ioredis';
import { RedisCreditStore } from '../../../lib/access/buckets.js';
import { RedisStore } from '../../../lib/cache/redis.js';
import { freePort } from '../../../lib/indexer/postgres/embedded.js';
import type { Logger } from '../../../lib/log.js';
import { hasRedis, redisServer, startRedis, type TestRedis } from '../../support/redis.js';
import { until as waitUntil } from '../../support/wait.js';

/** One clock for both stores, moved by hand. */
const clock = { now: Date.UTC(2026, 10, 28, 12, 0, 0) };
const read = () => clock.now;

function recorder(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = (obj: unknown, msg?: string) => lines.push(typeof obj === 'string' ? obj : `${msg ?? ''} ${JSON.stringify(obj)}`);
  const logger = { debug: log, info: log, warn: log, error: log, child: () => logger } as unknown as Logger;
  return { logger, lines };
}

async function store(t: ExecutionContext, redis: TestRedis, logger?: Logger): Promise<RedisCreditStore> {
  const s = new RedisCreditStore({ url: redis.url, prefix: 'test:', timeoutMs: 500, leaseMs: 60_000 }, { now: read, ...(logger ? { logger } : {}) });
  t.teardown(() => s.close());
  await until(() => s.client.status === 'ready');
  return s;
}

const until = (ok: () => boolean | Promise<boolean>, ms = 20_000) => waitUntil(ok, ms, 20);

function redisClient(t: ExecutionContext, redis: TestRedis): Redis {
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  t.teardown(() => client.disconnect());
  return client;
}

test('a password in the Redis URL\'s query, as ioredis reads it, is logged by neither the budgets nor the cache', async (t) => {
  // ioredis takes each query parameter as an option: ?password=… is the password. Nothing listens
  // on the port, so both stores log that Redis is unreachable, naming the URL.
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}/0?password=QueryPassw0rd99`;
  const { logger, lines } = recorder();
  const credits = new RedisCreditStore({ url, prefix: 'test:', timeoutMs: 100, leaseMs: 60_000 }, { now: read, logger });
  t.teardown(() => credits.close());
  const cache = new RedisStore({ url, prefix: 'test:', ttlSeconds: 60, maxBytes: 2 ** 30, timeoutMs: 100, hmacKey: 'test-hmac-key-0123456789' }, { logger });
  t.teardown(() => cache.close());
  t.true((await credits.take('k', { perDay: 100 }, 1)).allowed, 'decided locally');
  await until(() => lines.some((l) => l.includes('cache: Redis unreachable')) && lines.some((l) => l.includes('credits: Redis unreachable')));
  t.is(lines.filter((l) => l.includes(`redis://127.0.0.1:${port}/0?password=***`)).length, 2, lines.join('\n'));
  t.false(lines.some((l) => l.includes('QueryPassw0rd99')), lines.join('\n'));
});

if (hasRedis()) {
  test.serial('two stores share one day budget: 100 credits, 60 asked through each, the second is refused part way', async (t) => {
    const redis = await startRedis(t);
    const a = await store(t, redis);
    const b = await store(t, redis);
    const limits = { perDay: 100 };
    let granted = 0;
    for (let i = 0; i < 6; i++) if ((await a.take('client-1', limits, 10)).allowed) granted += 10;
    t.is(granted, 60);
    const verdicts = [];
    for (let i = 0; i < 6; i++) verdicts.push(await b.take('client-1', limits, 10));
    const viaB = verdicts.filter((v) => v.allowed).length * 10;
    t.is(viaB, 40, 'refused part way');
    t.is(granted + viaB, 100);
    const refused = verdicts.at(-1)!;
    t.is(refused.refusal, 'day');
    t.is(refused.remainingDay, 0);
    t.is(refused.retryAfterSeconds, 12 * 3600, 'until 00:00 UTC');
    t.is(a.counts.fallbacks + b.counts.fallbacks, 0, 'every decision was Redis’s');
  });

  test.serial('taken at once through both stores, the budget is never overspent', async (t) => {
    const redis = await startRedis(t);
    const a = await store(t, redis);
    const b = await store(t, redis);
    const limits = { perDay: 100, perSecond: 1000 };
    const verdicts = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).take('racer', limits, 7)));
    const granted = verdicts.filter((v) => v.allowed).length * 7;
    t.is(granted, 98, 'fourteen takes of 7 fit in 100, the fifteenth does not');
    t.true(verdicts.filter((v) => v.allowed).every((v) => v.reservation!.local === false));
  });

  test.serial('the per-second bucket, the slots and the settle are shared: a reservation taken through one is settled through the other', async (t) => {
    const redis = await startRedis(t);
    const a = await store(t, redis);
    const b = await store(t, redis);
    const limits = { perSecond: 50, burst: 100, concurrent: 2, perDay: 10_000 };
    const first = await a.take('k', limits, 60);
    t.true(first.allowed);
    t.is(first.remainingSecond, 40);
    const second = await b.take('k', limits, 40);
    t.true(second.allowed);
    const full = await a.take('k', limits, 1);
    t.false(full.allowed);
    t.is(full.refusal, 'concurrent', 'two requests in flight, through two stores');
    const settled = await b.settle(first.reservation!, 10);
    t.is(settled.remainingSecond, 50, 'the estimate of 60 settled at 10: 50 refunded');
    t.is(settled.remainingDay, 10_000 - 50);
    const third = await a.take('k', limits, 60);
    t.false(third.allowed, '50 in the bucket');
    t.is(third.refusal, 'second');
    t.is(third.retryAfterSeconds, 1);
    clock.now += 1000;
    const later = await a.take('k', limits, 60);
    t.true(later.allowed, 'refilled by 50 in a second');
    t.is(later.remainingSecond, 40);
    clock.now -= 1000;
  });

  test.serial('two stores whose clocks differ by 200 ms: taking in turn through each refills nothing the time did not', async (t) => {
    const redis = await startRedis(t);
    const skewed = (aheadMs: number) => {
      const s = new RedisCreditStore({ url: redis.url, prefix: 'test:', timeoutMs: 500, leaseMs: 60_000 }, { now: () => clock.now + aheadMs });
      t.teardown(() => s.close());
      return s;
    };
    const ahead = skewed(200);
    const behind = skewed(0);
    await until(() => ahead.client.status === 'ready' && behind.client.status === 'ready');
    // A full bucket of 100 credits and no time passing: ten takes of 10, then refusals, whichever store takes.
    const limits = { perSecond: 100 };
    let granted = 0;
    for (let i = 0; i < 30; i++) if ((await (i % 2 === 0 ? ahead : behind).take('client-skew', limits, 10)).allowed) granted += 10;
    t.is(granted, 100, 'the skew is no refill');
    t.is(ahead.counts.fallbacks + behind.counts.fallbacks, 0);
  });

  test.serial('every key written expires, and none names the client key', async (t) => {
    const redis = await startRedis(t);
    const a = await store(t, redis);
    const secretKey = 'sk_live_do_not_store_me';
    const v = await a.take(secretKey, { perSecond: 10, perDay: 100, concurrent: 3 }, 5);
    t.true(v.allowed);
    const client = redisClient(t, redis);
    const keys = await client.keys('*');
    t.is(keys.length, 3);
    for (const key of keys) {
      t.true(key.startsWith('test:credits:'), key);
      t.false(key.includes(secretKey), key);
      const ttl = await client.pttl(key);
      t.true(ttl > 0, `${key} expires`);
      t.true(ttl <= 2 * 86_400_000, `${key} within two days`);
    }
  });

  test.serial('Redis killed: each store decides from a local bucket, logged once; Redis back: shared again', async (t) => {
    const redis = await startRedis(t);
    const { logger, lines } = recorder();
    const a = await store(t, redis, logger);
    const limits = { perDay: 100 };
    t.true((await a.take('k', limits, 60)).allowed);
    await redis.stop();
    await until(() => a.client.status !== 'ready');
    const local = [];
    for (let i = 0; i < 12; i++) local.push(await a.take('k', limits, 10));
    t.is(local.filter((v) => v.allowed).length, 10, 'the local bucket holds the whole day of its own');
    t.true(local.every((v) => v.reservation === undefined || v.reservation.local));
    t.is(lines.filter((l) => l.includes('credits: Redis unreachable')).length, 1, 'logged once per episode');
    t.is(a.counts.fallbacks, 1);
    t.false(lines.some((l) => l.includes('redis://') && /:[^@/]*@/.test(l)));
    await redis.start();
    await until(() => a.client.status === 'ready', 15_000);
    // This test's redis-server keeps nothing on disk: the restarted one starts with an empty day.
    const back = await a.take('k', limits, 100);
    t.true(back.allowed, 'back on Redis, not on the local bucket (spent there)');
    t.false(back.reservation!.local);
    t.false((await a.take('k', limits, 10)).allowed);
    t.true(lines.some((l) => l.includes('credits: Redis answers again')));
  });
} else {
  test(`credit budgets on Redis: skipped, ${redisServer} not found`, (t) => {
    if (process.env.OMNIGATE_REQUIRE_REDIS === '1') t.fail(`${redisServer} is required (OMNIGATE_REQUIRE_REDIS=1)`);
    else t.pass();
  });
}
