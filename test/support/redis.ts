/**
 * A real redis-server (Debian's `redis-server` package) for tests, on a free port, with no
 * persistence, in its own process group (stopped in teardown). `stop()` kills it and `start()`
 * brings it back on the same port, for tests of Redis going away and coming back.
 * `redisServer` is the binary (OMNIGATE_REDIS_SERVER, else redis-server on the PATH): a machine
 * without it skips the Redis tests unless OMNIGATE_REQUIRE_REDIS=1 (set by .ci/run).
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { freePort } from '../../lib/indexer/postgres/embedded.js';
import { spawnGroup, stopGroup, untilListening, type Teardown } from './procs.js';

export const redisServer = process.env.OMNIGATE_REDIS_SERVER ?? 'redis-server';

/** Whether the redis-server binary runs here. */
export function hasRedis(): boolean {
  try {
    execFileSync(redisServer, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface TestRedis {
  url: string;
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedis(t: Teardown): Promise<TestRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const redis: TestRedis = {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    async start() {
      child = spawnGroup(t, redisServer, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], { stdio: 'ignore' });
      await untilListening(port, 'redis-server');
    },
    async stop() {
      if (child) await stopGroup(child, 2_000);
      child = undefined;
    },
  };
  await redis.start();
  return redis;
}
