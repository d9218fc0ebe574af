/**
 * No anvil outlives its test worker, however the worker ends. ava's timeout ends a worker with a
 * signal: no 'exit' event, no `after.always`, so the helper's exit hook never runs. A stand-in
 * worker (a Node process with the test loader) starts anvil nodes through test/support/anvil.ts,
 * reports their pids and is then SIGKILLed; the watchdogs stop the nodes.
 */
import { once } from 'node:events';
import test from 'ava';
import { exitOf, processes, spawnGroup, stopGroup, waitGone } from '../../support/procs.js';

const WORKER = `
import { startAnvils } from './test/support/anvil.ts';
const cluster = await startAnvils(2);
process.stdout.write(JSON.stringify(cluster.nodes.map((n) => n.pid)) + '\\n');
setInterval(() => {}, 60_000);
`;

test('anvil nodes and their watchdogs are gone once the worker that started them is SIGKILLed', async (t) => {
  const worker = spawnGroup(t, process.execPath, ['--import=tsx', '--input-type=module', '-e', WORKER], { stdio: ['ignore', 'pipe', 'inherit'] });
  worker.stdout!.setEncoding('utf8');
  let out = '';
  while (!out.includes('\n')) {
    const [chunk] = await Promise.race([once(worker.stdout!, 'data'), exitOf(worker).then(() => [''])]) as [string];
    if (chunk === '') break;
    out += chunk;
  }
  const pids = JSON.parse(out) as number[];
  t.is(pids.length, 2);
  const anvils = () => processes(() => true).then((all) => all.filter((p) => pids.includes(p.pid)));
  const watchdogs = () => processes((argv) => argv.includes('omnigate-anvil-watchdog') && pids.some((pid) => argv.includes(String(pid))));
  // Every anvil runs in its own process group, watched by one watchdog.
  const running = await anvils();
  t.deepEqual(running.map((p) => p.pgid).sort(), [...pids].sort());
  t.is((await watchdogs()).length, 2);
  t.teardown(async () => {
    for (const p of await anvils()) process.kill(p.pid, 'SIGKILL');
  });

  // What ava's timeout does to a worker: no exit hook, no after.always runs.
  process.kill(worker.pid!, 'SIGKILL');
  await exitOf(worker);
  t.deepEqual(await waitGone(anvils), [], 'the anvil nodes were stopped');
  t.deepEqual(await waitGone(watchdogs), [], 'the watchdogs are gone');
  await stopGroup(worker);
});

test('a normal stop ends the watchdog with its anvil', async (t) => {
  const { startAnvils } = await import('../../support/anvil.js');
  const cluster = await startAnvils(1);
  t.teardown(() => cluster.stop());
  const pid = cluster.nodes[0]!.pid;
  const watchdogs = () => processes((argv) => argv.includes('omnigate-anvil-watchdog') && argv.includes(String(pid)));
  t.is((await watchdogs()).length, 1);
  await cluster.stop();
  t.deepEqual(await waitGone(watchdogs), []);
});
