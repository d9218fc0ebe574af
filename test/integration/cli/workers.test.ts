/**
 * `omnigate serve --workers 2`, the real CLI: one port answered by two worker processes (their
 * pids in the request log lines); the upstreams probed once per round, not once per worker;
 * /metrics aggregated across the workers; a worker killed with SIGKILL replaced while the port
 * keeps answering; a SIGTERM during a slow request lets it finish, the primary exits 0 and no
 * process is left; a worker that cannot start stops the cluster with its exit code; workers that
 * keep crashing are replaced with a backoff until the primary gives up; one budget per client key,
 * whose slots a worker that dies mid-request does not keep, and which the primary keeps while Redis is away;
 * a replaced worker serving the config and key files as the primary read them; an upstream's
 * maxConcurrent kept by the workers together;
 * the proof self-check run once, by the primary, its result applied by every worker.
 */
import test, { type ExecutionContext } from 'ava';
import net from 'node:net';
import { writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { finalizedChain, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { descendants, processes, stillRunning, waitGone } from '../../support/procs.js';
import { rpc, send, type Reply } from '../../support/gateway.js';
import { listeningPort, logLines, runCli, type Run, configFile, chainLines, relayerKeyLines } from '../../support/cli.js';
import { freePort, stopAllAnvils } from '../../support/anvil.js';
import { proofChain } from '../../support/proof-chain.js';
import { startTamperProxy } from '../../support/tamper-proxy.js';
import { slots, until } from '../../support/wait.js';

// The tests run side by side, each with its own cluster, ports and files; three clusters at a
// time (their start is CPU: more at once only makes each slower on a loaded machine).
const gate = slots(3);

const ADDRESS = '0x00000000000000000000000000000000000000aa';
const hex = (n: number) => `0x${n.toString(16)}`;

async function upstreams(t: ExecutionContext, delayMs = 0): Promise<FakeUpstream[]> {
  const list = await Promise.all([0, 1].map(() => startFakeUpstream({ answer: finalizedChain(() => 90), delayMs })));
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  return list;
}

async function serve(t: ExecutionContext, list: FakeUpstream[], headsMs = 60_000, by: 'flag' | 'config' = 'flag'): Promise<{ run: Run; base: string }> {
  const file = await configFile(t, [
    'port: 0',
    'refreshInterval: 1',
    'confirmations: 2',
    `heads: { intervalMs: ${headsMs} }`,
    `server: { shutdownMs: 10000${by === 'config' ? ', workers: 2' : ''} }`,
    ...chainLines(list),
    '',
  ].join('\n'), 'omnigate-workers-');
  const run = runCli(['serve', '--config', file, '--no-indexer', ...(by === 'flag' ? ['--workers', '2'] : [])], {}, { t });
  const port = await listeningPort(run);
  return { run, base: `http://127.0.0.1:${port}` };
}

const post = (base: string, body: unknown, path = '/rpc/1337'): Promise<Reply> => send(base, 'POST', path, JSON.stringify(body), { 'content-type': 'application/json', connection: 'close' });
const calls = (f: FakeUpstream, method: string) => f.requests.filter((r) => (r.body as { method?: string }).method === method).length;
const workerPids = (run: Run) => new Set(logLines(run).filter((l) => l.msg === 'rpc request').map((l) => l.worker as number));

/**
 * `omnigate serve --workers 2` with one client key of 100 credits a day (`access` lines beside
 * its keys: `redis`), asked for twelve balances at N=1, 20 credits each, on a new connection
 * each (so both workers take requests); once both workers answered. One budget holds five.
 */
async function spendTwelve(t: ExecutionContext, key: string, access: string[] = []): Promise<{ run: Run; replies: Reply[] }> {
  const list = await upstreams(t);
  const file = await configFile(t, [
    'port: 0',
    'confirmations: 1',
    'server: { shutdownMs: 10000 }',
    'access:',
    ...access,
    ...relayerKeyLines(key),
    ...chainLines(list),
    '',
  ].join('\n'), 'omnigate-workers-');
  const run = runCli(['serve', '--config', file, '--no-indexer', '--workers', '2'], {}, { t });
  const base = `http://127.0.0.1:${await listeningPort(run)}`;
  const replies: Reply[] = [];
  for (let i = 0; i < 12; i++) {
    replies.push(await send(base, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_getBalance', [ADDRESS, hex(0x10 + i)], i)), { 'content-type': 'application/json', connection: 'close', 'x-api-key': key }));
  }
  await until(() => workerPids(run).size === 2);
  return { run, replies };
}

/** The value of one sample of the Prometheus text, or undefined. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => (labels === '' ? l.startsWith(`${name} `) : l.startsWith(`${name}{`) && labels.split(',').every((p) => l.includes(p))));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('two workers answer on one port, probe once per round, and /metrics sums their requests', async (t) => {
  await gate(t);
  const list = await upstreams(t);
  const { run, base } = await serve(t, list);
  // A confirmed N=2 read needs both upstreams up: every worker got the primary's probe rounds.
  const answers: Reply[] = [];
  for (let i = 0; i < 40; i++) answers.push(await post(base, rpc('eth_getBalance', [ADDRESS, hex(0x10 + i)], i)));
  for (const a of answers) t.is(a.status, 200, a.text);
  t.true(answers.every((a) => a.headers['x-confirmable'] === 'true'));
  await until(() => workerPids(run).size === 2);
  t.is(workerPids(run).size, 2, 'requests answered by both workers');

  // Probes: one eth_chainId per upstream per round (refreshInterval 1 s), as one process would send, not one per worker.
  // Counted once each upstream got four more (a loaded machine may delay a round): at most one
  // per round begun meanwhile, where one per worker would be twice that (its four within two
  // seconds, where three rounds begin at most).
  const before = list.map((f) => calls(f, 'eth_chainId'));
  const started = Date.now();
  await until(() => list.every((f, i) => calls(f, 'eth_chainId') - before[i]! >= 4));
  const probes = list.map((f, i) => calls(f, 'eth_chainId') - before[i]!);
  const rounds = Math.ceil((Date.now() - started) / 1000) + 1;
  for (const n of probes) t.true(n <= rounds, `${n} probes in ${rounds} rounds at most`);

  // /metrics, whichever worker answers it: the 40 requests, summed across the workers, and one head (not two summed).
  for (let i = 0; i < 4; i++) {
    const metrics = await send(base, 'GET', '/metrics', undefined, { connection: 'close' });
    t.is(metrics.status, 200);
    t.is(sample(metrics.text, 'omnigate_requests_total', 'method="eth_getBalance",outcome="ok"'), 40, metrics.text.slice(0, 400));
    t.is(sample(metrics.text, 'omnigate_workers', ''), 2);
    t.is(sample(metrics.text, 'omnigate_chain_head_block', 'tag="latest"'), 100);
    t.is(sample(metrics.text, 'omnigate_upstream_up', `upstream="${list[0]!.url.replace(/\/$/, '')}`) ?? sample(metrics.text, 'omnigate_upstream_up', 'chain="1337"'), 1);
  }
});

test('the finalized route never goes back across the workers, a new worker included', async (t) => {
  await gate(t);
  let finalized = 90;
  const list = await Promise.all([0, 1].map(() => startFakeUpstream({ answer: finalizedChain(() => finalized) })));
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  const { run, base } = await serve(t, list, 200);
  const pins = () => list.flatMap((f) => f.requests.filter((r) => (r.body as { method?: string }).method === 'eth_getBalance').map((r) => (r.body as { params: string[] }).params[1]));
  // (a new address each time: a read already confirmed at block 90 would be answered from the cache)
  const finalizedRead = (id: number) => post(base, rpc('eth_getBalance', [`0x${id.toString(16).padStart(40, '0')}`, 'latest'], id), '/finalized/rpc/1337');
  await until(async () => (await finalizedRead(0)).status === 200);
  for (let i = 1; i <= 10; i++) t.is((await finalizedRead(i)).status, 200);
  t.deepEqual(new Set(pins()), new Set([hex(90)]));
  // The providers' finalized block goes back to 80 (a drop seen twice is believed); then a worker
  // is replaced: the new one knows only 80 of its own, the primary's floor says 90.
  finalized = 80;
  const reported = async () => ((await send(base, 'GET', '/chains', undefined, { connection: 'close' })).body as { upstreams: { heads: { finalized: string } }[] }[])[0]!.upstreams.map((u) => u.heads.finalized);
  await until(async () => (await reported()).every((f) => f === '80'));
  const workers = () => descendants(run.child.pid!).then((all) => all.filter((p) => p.ppid === run.child.pid));
  const [victim] = await workers();
  process.kill(victim!.pid, 'SIGKILL');
  await until(() => logLines(run).filter((l) => l.msg === 'worker listening').length === 3);
  t.false((await workers()).some((p) => p.pid === victim!.pid));
  const before = pins().length;
  for (let i = 11; i <= 30; i++) t.is((await finalizedRead(i)).status, 200);
  t.is(workerPids(run).size >= 2, true);
  t.deepEqual(new Set(pins().slice(before)), new Set([hex(90)]), 'every worker pins the route at 90, never 80');
});

test('a worker killed with SIGKILL is replaced, and the port keeps answering', async (t) => {
  await gate(t);
  const list = await upstreams(t);
  const { run, base } = await serve(t, list);
  const workers = () => descendants(run.child.pid!).then((all) => all.filter((p) => p.ppid === run.child.pid && p.argv.some((a) => a.endsWith('cli/index.js'))));
  await until(async () => (await workers()).length === 2);
  const [victim] = await workers();
  process.kill(victim!.pid, 'SIGKILL');
  // (a connection handed to the worker as it died is reset: once the primary has seen it exit, none is)
  await until(() => logLines(run).some((l) => l.msg === 'worker exited unasked: replacing it'));
  for (let i = 0; i < 10; i++) {
    const r = await post(base, rpc('eth_getBalance', [ADDRESS, hex(0x40 + i)], i));
    t.is(r.status, 200, r.text);
  }
  await until(async () => {
    const now = await workers();
    return now.length === 2 && !now.some((p) => p.pid === victim!.pid);
  });
  t.true(logLines(run).some((l) => l.msg === 'worker exited unasked: replacing it' && l.worker === victim!.pid));
  for (let i = 0; i < 6; i++) t.is((await post(base, rpc('eth_getBalance', [ADDRESS, hex(0x60 + i)], i))).status, 200);
});

// SIGHUP: the terminal of a cluster started from a shell closing reaches the whole process group too.
for (const signal of ['SIGTERM', 'SIGHUP'] as const)
test(`${signal} during a slow request: it completes, the primary exits 0, no process is left`, async (t) => {
  await gate(t);
  const list = await upstreams(t, 1_500);
  const { run, base } = await serve(t, list);
  await until(async () => (await descendants(run.child.pid!)).length >= 2);
  const pids = [run.child.pid!, ...(await descendants(run.child.pid!)).map((p) => p.pid)];
  const slow = post(base, rpc('eth_getBalance', [ADDRESS, hex(0x99)], 'slow'));
  await until(() => list.some((f) => f.requests.some((r) => (r.body as { method?: string }).method === 'eth_getBalance')), 5_000);
  // As a supervisor or Ctrl-C does: the signal reaches the whole process group.
  process.kill(-run.child.pid!, signal);
  const answer = await slow.catch((err: Error) => {
    throw new Error(`${err.message}; the gateway wrote: ${run.out.join('')} ${run.err.join('')}`);
  });
  t.is(answer.status, 200, answer.text);
  t.is(answer.body.id, 'slow');
  t.is(await run.exited, 0, run.err.join(''));
  t.deepEqual(await waitGone(() => stillRunning(pids)), []);
});

test('SIGTERM to the primary alone stops the workers gracefully too (server.workers: 2 in the config)', async (t) => {
  await gate(t);
  const list = await upstreams(t, 1_000);
  const { run, base } = await serve(t, list, 60_000, 'config');
  t.like(logLines(run).find((l) => l.msg === 'omnigate listening'), { workers: 2 });
  await until(async () => (await descendants(run.child.pid!)).length >= 2);
  const pids = [run.child.pid!, ...(await descendants(run.child.pid!)).map((p) => p.pid)];
  const slow = post(base, rpc('eth_getBalance', [ADDRESS, hex(0x98)], 'slow'));
  await until(() => list.some((f) => f.requests.some((r) => (r.body as { method?: string }).method === 'eth_getBalance')), 5_000);
  run.child.kill('SIGTERM');
  t.is((await slow).status, 200);
  t.is(await run.exited, 0, run.err.join(''));
  t.deepEqual(await waitGone(() => stillRunning(pids)), []);
});

test('a worker that cannot start (the port taken) stops the cluster with its exit code and message', async (t) => {
  await gate(t);
  const list = await upstreams(t);
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, resolve));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const { port } = taken.address() as net.AddressInfo;
  const file = await configFile(t, [...chainLines(list), ''].join('\n'), 'omnigate-workers-');
  const run = runCli(['serve', '--config', file, '--no-indexer', '--workers', '2', '--port', String(port)], {}, { t });
  const pid = run.child.pid!;
  t.is(await run.exited, 1);
  t.regex(run.err.join(''), new RegExp(`port ${port} is already in use`));
  t.true(logLines(run).some((l) => l.msg === 'a worker exited before the cluster was listening: stopping'));
  t.deepEqual(await waitGone(() => processes((argv) => argv.includes(file)).then((all) => all.filter((p) => p.pid !== pid))), []);
});

test('a config listing the gateway itself: a call one worker makes is refused by the other at once', async (t) => {
  await gate(t);
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const file = await configFile(t, ['refreshInterval: 60', 'heads: { intervalMs: 60000 }', 'chains:', '  1337:', '    rpcs:', `      - http://127.0.0.1:${port}/rpc/1337`, ''].join('\n'), 'omnigate-workers-');
  const run = runCli(['serve', '--config', file, '--no-indexer', '--workers', '2', '--port', String(port)], {}, { t });
  const base = `http://127.0.0.1:${await listeningPort(run)}`;
  const answer = await post(base, rpc('eth_blockNumber', [], 'loop'));
  t.not(answer.status, 200);
  // The client's request and the call it made, which came back to a worker (either) and was
  // refused there: the workers share the loop tokens. (With a token per process, the other worker
  // would have sent it on once more.)
  const metrics = await send(base, 'GET', '/metrics', undefined, { connection: 'close' });
  const counted = metrics.text.split('\n').filter((l) => l.startsWith('omnigate_requests_total{')).map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
  t.is(counted.reduce((a, b) => a + b, 0), 2, metrics.text.split('\n').filter((l) => l.startsWith('omnigate_requests_total{')).join('\n'));
  t.true(metrics.text.includes('outcome="OMNI_ERR_LOOP"'));
});

// (not gated: its cluster mostly waits, on the preload's delays and the primary's backoff, while the others run)
test('workers that keep crashing soon after their start are replaced with a backoff, then the primary gives up (exit 1)', async (t) => {
  // Each worker exits 1.5 s after it listens; the first two listen only 10.5 s after their fork (a
  // slow start, as on a loaded host): crashes soon after the start all the same, counted from
  // listening. No wait for the cluster's 'omnigate listening': a worker may crash before the other listens.
  const list = await upstreams(t);
  const file = await configFile(t, ['port: 0', ...chainLines(list), ''].join('\n'), 'omnigate-workers-');
  const run = runCli(['serve', '--config', file, '--no-indexer', '--workers', '2'], {}, { t, preload: resolve('test/fixtures/workers/crash-after-listening.mjs') });
  const replacing = () => logLines(run).filter((l) => l.msg === 'worker exited unasked: replacing it');
  // (a primary that does not give up replaces a fifth: the test fails then, without waiting for its timeout)
  let code = 'still running' as number | null | 'still running';
  void run.exited.then((c) => (code = c));
  await until(() => code !== 'still running' || replacing().length > 4, 100_000);
  t.is(code, 1, `restarts after ${JSON.stringify(replacing().map((l) => l.restartInMs))} ms`);
  const lines = logLines(run);
  const replaced = replacing();
  t.is(replaced.length, 4, 'four replaced, the fifth crash in a row ends it');
  t.deepEqual(replaced.map((l) => l.restartInMs), [250, 500, 1000, 2000]);
  t.true(replaced.every((l) => l.code === 3));
  t.true(lines.some((l) => typeof l.msg === 'string' && l.msg.startsWith('workers keep crashing')));
  // (port 0 in the config: one port picked once, the replacements of workers all gone included)
  const ports = lines.filter((l) => l.msg === 'worker listening').map((l) => l.port);
  t.true(ports.length >= 4);
  t.is(new Set(ports).size, 1);
});

test('two workers without Redis spend one budget per client key, kept by the primary', async (t) => {
  await gate(t);
  const { run, replies } = await spendTwelve(t, 'workers-budget-key-0123456789');
  const admitted = replies.filter((r) => r.status === 200);
  t.is(admitted.length, 5, replies.map((r) => `${r.status} ${r.headers['x-credits']}`).join(', '));
  t.true(admitted.every((r) => r.headers['x-credits'] === '20'));
  const refused = replies.filter((r) => r.status === 429);
  t.is(refused.length, 7);
  t.true(refused.every((r) => (r.body as { error: { code: number; data: { reason: string } } }).error.data.reason === 'day'));
  t.is(new Set(logLines(run).filter((l) => l.msg === 'rpc request').map((l) => l.worker)).size, 2, 'both workers answered');
});

test('a worker that dies mid-request does not keep its key\'s slot: the primary frees it', async (t) => {
  await gate(t);
  // One request of the key at a time; its read of HUNG never gets an answer from the upstreams.
  const HUNG = '0x00000000000000000000000000000000000000bb';
  const hung = (body: unknown) => (body as { method?: string; params?: unknown[] }).method === 'eth_getBalance' && (body as { params: unknown[] }).params[0] === HUNG;
  const list = await Promise.all([0, 1].map(() => startFakeUpstream({ answer: finalizedChain(() => 90), hangIf: hung })));
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  const key = 'workers-slot-key-0123456789ab';
  const file = await configFile(t, [
    'port: 0',
    'confirmations: 1',
    'server: { shutdownMs: 10000 }',
    'timeouts: { requestMs: 60000, upstreamMs: 60000 }',
    'access:',
    ...relayerKeyLines(key, 'maxConcurrent: 1'),
    ...chainLines(list),
    '',
  ].join('\n'), 'omnigate-workers-');
  const run = runCli(['serve', '--config', file, '--no-indexer', '--workers', '2'], {}, { t });
  const base = `http://127.0.0.1:${await listeningPort(run)}`;
  const ask = (address: string, id: number) => send(base, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_getBalance', [address, hex(0x10)], id)), { 'content-type': 'application/json', connection: 'close', 'x-api-key': key });
  const stuck = ask(HUNG, 1).catch((err: Error) => err);
  await until(() => list.some((f) => f.requests.some((r) => hung(r.body))));
  // The slot is held: a second request of the key is refused while the first is in flight.
  const second = await ask(ADDRESS, 2);
  t.is(second.status, 429, second.text);
  t.is((second.body as { error: { data: { reason: string } } }).error.data.reason, 'concurrent');
  // Both workers die (the one holding the request among them) and are replaced.
  const workers = () => descendants(run.child.pid!).then((all) => all.filter((p) => p.ppid === run.child.pid && p.argv.some((a) => a.endsWith('cli/index.js'))));
  await until(async () => (await workers()).length === 2);
  const victims = await workers();
  for (const v of victims) process.kill(v.pid, 'SIGKILL');
  t.true((await stuck) instanceof Error, 'the request in flight ends with its worker');
  await until(() => logLines(run).filter((l) => l.msg === 'worker listening').length === 4);
  // The key may make a request again, on whichever worker: the dead worker's slot was freed.
  for (let i = 0; i < 4; i++) {
    const r = await ask(ADDRESS, 10 + i);
    t.is(r.status, 200, r.text);
  }
});

test('two workers whose budgets\' Redis is unreachable still spend one budget per client key, through the primary', async (t) => {
  await gate(t);
  // As without Redis: the day holds five balances, whichever worker answers.
  const { run, replies } = await spendTwelve(t, 'workers-redis-down-key-0123456', [`  redis: { url: "redis://127.0.0.1:${await freePort()}/0", prefix: "omnigate:test:" }`]);
  t.is(replies.filter((r) => r.status === 200).length, 5, replies.map((r) => `${r.status} ${r.headers['x-credits']}`).join(', '));
  t.true(replies.filter((r) => r.status === 429).every((r) => (r.body as { error: { data: { reason: string } } }).error.data.reason === 'day'));
  t.true(logLines(run).some((l) => typeof l.msg === 'string' && l.msg.startsWith('credits: Redis unreachable')));
});

test('a worker that replaces a crashed one serves the config and key files the primary read, not the files as edited since', async (t) => {
  await gate(t);
  const list = await upstreams(t);
  const KEY_A = 'workers-keyfile-a-0123456789ab';
  const KEY_B = 'workers-keyfile-b-0123456789ab';
  // Two Ed25519 seeds: the answers are signed with the first whichever worker answers.
  const SIGNER_A = '11'.repeat(32);
  const SIGNER_B = '22'.repeat(32);
  const lines = (denied: string) => [
    'port: 0',
    'confirmations: 1',
    'server: { shutdownMs: 10000 }',
    'attest: { keyFile: SIGNERFILE }',
    'access:',
    '  keys:',
    '    - label: relayer',
    '      keyFile: KEYFILE',
    `      denyMethods: [${denied}]`,
    ...chainLines(list),
    '',
  ];
  const file = await configFile(t, lines('eth_call'), 'omnigate-workers-');
  const keyFile = join(dirname(file), 'relayer.key');
  const signerFile = join(dirname(file), 'signer.key');
  const written = (denied: string) => lines(denied).join('\n').replace('KEYFILE', keyFile).replace('SIGNERFILE', signerFile);
  await writeFile(keyFile, `${KEY_A}\n`);
  await writeFile(signerFile, `${SIGNER_A}\n`);
  await writeFile(file, written('eth_call'));
  const run = runCli(['serve', '--config', file, '--no-indexer', '--workers', '2'], {}, { t });
  const base = `http://127.0.0.1:${await listeningPort(run)}`;
  const ask = (key: string, id: number) => send(base, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_getBalance', [ADDRESS, hex(0x10 + id)], id)), { 'content-type': 'application/json', connection: 'close', 'x-api-key': key });
  const first = await ask(KEY_A, 0);
  t.is(first.status, 200);
  const signer = first.headers['x-attestation-key'];
  t.truthy(signer, JSON.stringify(first.headers));
  // The key files rotated (client key and signing key) and the config edited (eth_getBalance
  // denied to the key) while serving; then a worker dies.
  await writeFile(keyFile, `${KEY_B}\n`);
  await writeFile(signerFile, `${SIGNER_B}\n`);
  await writeFile(file, written('eth_getBalance'));
  const workers = () => descendants(run.child.pid!).then((all) => all.filter((p) => p.ppid === run.child.pid && p.argv.some((a) => a.endsWith('cli/index.js'))));
  await until(async () => (await workers()).length === 2);
  const before = await workers();
  const victim = before[0];
  process.kill(victim!.pid, 'SIGKILL');
  await until(() => logLines(run).filter((l) => l.msg === 'worker listening').length === 3);
  // Both workers, the new one included, still serve key A its balances and know no key B.
  const a: Reply[] = [];
  const b: Reply[] = [];
  // Key A's in a row, then key B's: the workers take connections in turn, so both answer key A.
  for (let i = 1; i <= 8; i++) a.push(await ask(KEY_A, i));
  for (let i = 1; i <= 8; i++) b.push(await ask(KEY_B, 20 + i));
  t.deepEqual(a.map((r) => r.status), Array(8).fill(200), a.map((r) => r.text).join('\n'));
  t.deepEqual(a.map((r) => r.headers['x-attestation-key']), Array(8).fill(signer), 'signed with the key the cluster started with');
  t.deepEqual(b.map((r) => r.status), Array(8).fill(401));
  const [survivor] = before.filter((p) => p.pid !== victim!.pid);
  const replacement = (await workers()).find((p) => p.pid !== survivor!.pid && p.pid !== victim!.pid);
  t.truthy(replacement);
  t.true(logLines(run).some((l) => l.msg === 'rpc request' && l.worker === replacement!.pid && l.key === 'relayer' && l.status === 200), 'the new worker answered key A too');
});

test('an upstream\'s maxConcurrent is the cluster\'s: two workers keep to it together, not twice it', async (t) => {
  await gate(t);
  // Upstream A (first: strategy priority) holds its balances until released; B answers at once.
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const isBalance = (body: unknown) => (body as { method?: string }).method === 'eth_getBalance';
  const a = await startFakeUpstream({ answer: finalizedChain(() => 90), hold: (body) => (isBalance(body) ? released : undefined) });
  const b = await startFakeUpstream({ answer: finalizedChain(() => 90) });
  t.teardown(() => (release(), Promise.all([a.close(), b.close()])));
  const file = await configFile(t, [
    'port: 0',
    'confirmations: 1',
    'server: { shutdownMs: 10000 }',
    'chains:',
    '  1337:',
    '    strategy: priority',
    '    rpcs:',
    `      - { url: "${a.url}", maxConcurrent: 2 }`,
    `      - ${b.url}`,
    '',
  ].join('\n'), 'omnigate-workers-');
  const run = runCli(['serve', '--config', file, '--no-indexer', '--workers', '2'], {}, { t });
  const base = `http://127.0.0.1:${await listeningPort(run)}`;
  const balances = (f: FakeUpstream) => f.requests.filter((r) => isBalance(r.body)).length;
  // Six requests at once, handed to both workers: A takes two at most, B the others.
  const replies = Promise.all(Array.from({ length: 6 }, (_, i) => post(base, rpc('eth_getBalance', [ADDRESS, hex(0x10 + i)], i))));
  await until(() => balances(a) + balances(b) === 6);
  t.true(balances(a) <= 2, `${balances(a)} calls held at A, whose maxConcurrent is 2`);
  release();
  for (const r of await replies) t.is(r.status, 200, r.text);
  t.is(workerPids(run).size, 2, 'both workers answered');
});

test('verify: auto with two workers: the primary runs the self-check once and both workers prove', async (t) => {
  await gate(t);
  const chain = await proofChain('cancun');
  t.teardown(stopAllAnvils);
  const proxy = await startTamperProxy(chain.node.url);
  t.teardown(() => proxy.close());
  const file = await configFile(t, ['port: 0', 'confirmations: 1', 'server: { shutdownMs: 10000 }', 'chains:', `  ${chain.chainId}:`, '    rpcs:', `      - ${proxy.url}`, ''].join('\n'), 'omnigate-workers-');
  const run = runCli(['serve', '--config', file, '--no-indexer', '--workers', '2'], {}, { t });
  const base = `http://127.0.0.1:${await listeningPort(run)}`;
  const path = `/rpc/${chain.chainId}`;
  const read = (i: number) => post(base, rpc('eth_getBalance', [chain.recipient, hex(chain.blocks.logs)], i), path);
  await until(async () => (await read(0)).headers['x-verified-by'] === 'proof');
  // Every worker answers by proof (new connections spread the reads over both), and the
  // self-check's account proof was asked once, by the primary, not once per worker.
  const replies: Reply[] = [];
  for (let i = 1; i <= 20; i++) replies.push(await read(i));
  await until(() => workerPids(run).size === 2);
  t.true(replies.every((r) => r.status === 200 && r.headers['x-verified-by'] === 'proof'), replies.map((r) => r.headers['x-verified-by']).join(' '));
  // eth_getProof: one for the self-check, one per proven read (the first proven one and these 20).
  t.is(proxy.calls('eth_getProof'), 22);
});
