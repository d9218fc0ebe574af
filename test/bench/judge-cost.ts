/**
 * What judging the bench's 2.5 MB eth_getLogs reply costs, for two builds in one process:
 * `assessBody` (the event loop's path: parse, checks, canonical form, SHA-256) and `judgeBody`
 * (the judging thread's path: the same verdict read a slice at a time), `BEFORE_DIST` (e.g. a
 * build of main) against this worktree's dist/ (AFTER_DIST to change). Each round times every
 * build and function in turn; the figure is the CPU time of the process per call (user + system:
 * on a machine shared with other work, wall time counts the waits for a core too), the median of
 * a round's calls. First it checks that both builds and both functions give the same hash.
 *
 *   BEFORE_DIST=<the dist/ of a build of main> node --import tsx test/bench/judge-cost.ts
 *
 * Knobs: BENCH_ROUNDS (default 5), BENCH_RUNS (calls per round and function, default 15).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RpcPayload } from '../../lib/jsonrpc/types.js';
import { replyText, requests } from './payloads.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const runs = Number(process.env.BENCH_RUNS ?? 15);
const beforeDist = process.env.BEFORE_DIST;
const afterDist = resolve(process.env.AFTER_DIST ?? 'dist');
if (!beforeDist) throw new Error('set BEFORE_DIST to the dist/ of the build to compare with (e.g. a build of main)');

const body = Buffer.from(replyText('eth_getLogs', 2, 1));
const payload: RpcPayload = {
  calls: [{ id: 1, method: 'eth_getLogs', params: requests.getLogs.params }],
  batch: false,
  raw: Buffer.from(JSON.stringify(requests.getLogs)),
};

interface Build {
  name: string;
  fns: Record<'assessBody' | 'judgeBody', () => { ok: boolean; hash?: string }>;
}

async function load(name: string, dist: string): Promise<Build> {
  const answers = (await import(pathToFileURL(resolve(dist, 'lib/verify/answers/answers.js')).href)) as typeof import('../../lib/verify/answers/answers.js');
  const sliced = (await import(pathToFileURL(resolve(dist, 'lib/verify/answers/sliced.js')).href)) as typeof import('../../lib/verify/answers/sliced.js');
  return { name, fns: { assessBody: () => answers.assessBody(body, payload), judgeBody: () => sliced.judgeBody(body, payload) } };
}

const builds = [await load('before', resolve(beforeDist)), await load('after', afterDist)];
const hashes = new Set(builds.flatMap((b) => Object.values(b.fns).map((f) => f().hash)));
if (hashes.size !== 1 || hashes.has(undefined)) throw new Error(`the builds or functions disagree: ${[...hashes].join(', ')}`);

function cpuMs(f: () => unknown): number {
  const start = process.cpuUsage();
  f();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const medians = new Map<string, number[]>();
for (let r = 0; r < rounds; r++) {
  for (const build of builds) {
    for (const [fn, f] of Object.entries(build.fns)) {
      for (let w = 0; w < 3; w++) f();
      const times = Array.from({ length: runs }, () => cpuMs(f));
      const key = `${build.name} ${fn}`;
      medians.set(key, [...(medians.get(key) ?? []), median(times)]);
    }
  }
}
console.log(`${body.length} bytes, ${rounds} rounds of ${runs} calls; CPU ms per call, each round's median (median of the rounds):`);
for (const [key, xs] of medians) console.log(`  ${key.padEnd(18)} ${xs.map((x) => x.toFixed(1)).join(' ')} (${median(xs).toFixed(1)})`);
for (const fn of ['assessBody', 'judgeBody']) {
  console.log(`  ${fn} after ÷ before: ${(median(medians.get(`after ${fn}`)!) / median(medians.get(`before ${fn}`)!)).toFixed(2)}`);
}
