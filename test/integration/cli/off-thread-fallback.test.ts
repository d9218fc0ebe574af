/**
 * When the thread that judges large answers cannot start, the event loop judges them, on the
 * wire: the real CLI in a child process whose preload (test/fixtures/off-thread/
 * thread-cannot-start.mjs) makes that thread fail to start, its constructor throwing or the thread
 * failing while it loads. A large (≥ 1 MiB) answer is still confirmed with the hash the main
 * thread computes, and a large answer nested deeper than limits.jsonDepth fails as a small one
 * does (same status, JSON-RPC error and upstream failure), with or without a declared length.
 * Fake upstreams: one HTTP server on port 0 whose paths are the upstreams (`/<chain>/<role>`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { log } from '../../support/fake-upstream.js';
import { rpc, send, type Reply } from '../../support/gateway.js';
import { configFile, listeningPort, runCli } from '../../support/cli.js';
import { until } from '../../support/wait.js';
import { assessBody } from '../../../lib/verify/answers/answers.js';
import { offThreadFrom } from '../../../lib/verify/answers/off-thread.js';

const preload = resolve('test/fixtures/off-thread/thread-cannot-start.mjs');

/** 5,000 logs: a 2.5 MB eth_getLogs answer. */
const logs = Array.from({ length: 5_000 }, (_, i) => ({ ...log(i), data: `0x${i.toString(16).padStart(64, '0')}${'00'.repeat(96)}` }));

type Role = 'good' | 'deep-small' | 'deep-large' | 'deep-chunked';

/** The eth_getLogs answer of a role: the logs, or a list nesting 300 levels after `filler` small objects (small: none; large: past 1 MiB). */
function logsAnswer(role: Role, id: unknown): string {
  if (role === 'good') return JSON.stringify({ jsonrpc: '2.0', id, result: logs });
  const filler = role === 'deep-small' ? 0 : 80_000;
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":[${'{"data":"0x00"},'.repeat(filler)}${'['.repeat(300)}${']'.repeat(300)}]}`;
}

interface Farm {
  origin: string;
  /** eth_getLogs calls per path. */
  calls: Map<string, number>;
  /** eth_getLogs answer bytes per role. */
  length: Map<Role, number>;
}

/** The upstreams: `/<chain>/<role>` (any query) answers eth_chainId with its chain, eth_getLogs as its role says (`deep-chunked` without a Content-Length). */
async function farm(t: ExecutionContext): Promise<Farm> {
  const f: Farm = { origin: '', calls: new Map(), length: new Map() };
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', f.origin).pathname;
      const [, chain, role] = path.split('/') as [string, string, Role];
      const call = JSON.parse(text) as { id: unknown; method: string };
      let body: string;
      if (call.method === 'eth_getLogs') {
        f.calls.set(path, (f.calls.get(path) ?? 0) + 1);
        body = logsAnswer(role, call.id);
        f.length.set(role, Buffer.byteLength(body));
      } else {
        const result = call.method === 'eth_chainId' ? `0x${Number(chain).toString(16)}` : call.method === 'eth_blockNumber' ? '0x1313000' : null;
        body = JSON.stringify({ jsonrpc: '2.0', id: call.id, result });
      }
      const headers: http.OutgoingHttpHeaders = role === 'deep-chunked' ? { 'content-type': 'application/json' } : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
      res.writeHead(200, headers).end(body);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  f.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return f;
}

/** Chain 11: two good upstreams, N=2. Chains 12–14: one upstream each, deep-small, deep-large, deep-chunked. */
const deepChains = { 12: 'deep-small', 13: 'deep-large', 14: 'deep-chunked' } as const;

const getLogs = (chain: number, base: string): Promise<Reply> =>
  send(base, 'POST', `/rpc/${chain}`, JSON.stringify(rpc('eth_getLogs', [{ fromBlock: '0x1312d00', toBlock: '0x1313000' }])), { 'content-type': 'application/json', connection: 'close' });

for (const mode of ['throw', 'error'] as const) {
  test(`the judging thread cannot start (${mode === 'throw' ? 'its constructor throws' : 'it fails while it loads'}): large answers are judged in the event loop, a good one confirmed, a deep one failed as a small one is`, async (t) => {
    const f = await farm(t);
    const url = (chain: number, role: string) => `${f.origin}/${chain}/${role}`;
    const file = await configFile(
      t,
      [
        'port: 0',
        'host: 127.0.0.1',
        'chains:',
        '  11:',
        '    confirmations: 2',
        '    rpcs:',
        `      - { url: ${url(11, 'good')}, provider: one }`,
        `      - { url: ${url(11, 'good')}?second, provider: two }`,
        ...Object.entries(deepChains).flatMap(([chain, role]) => [`  ${chain}:`, '    rpcs:', `      - ${url(Number(chain), role)}`]),
        '',
      ],
      'omnigate-off-thread-',
    );
    const run = runCli(['serve', '--config', file, '--no-indexer'], { OMNIGATE_TEST_THREAD_FAILURE: mode }, { t, preload });
    const base = `http://127.0.0.1:${await listeningPort(run)}`;

    // A large answer, from two upstreams: confirmed, its hash the one the main thread computes.
    const good = await getLogs(11, base);
    t.is(good.status, 200, good.text.slice(0, 500));
    t.true(good.text.length >= offThreadFrom, `${good.text.length} bytes`);
    t.is(good.body.result?.length, 5_000);
    t.is(good.headers['x-confirmable'], 'true');
    t.is(String(good.headers['x-checked-urls']).split(',').length, 2);
    const main = assessBody(Buffer.from(good.text), { batch: false, calls: [{ id: 1, method: 'eth_getLogs', params: [] }] });
    t.is(good.headers['x-json-hash'], main.ok ? main.hash : 'not a vote');
    // The gateway did try the thread, and it failed to start (told on stderr, a pipe that may be
    // read after the answer's socket).
    const refused = `thread-cannot-start: the judging thread refused (${mode})`;
    await until(() => run.err.join('').includes(refused));
    t.true(run.err.join('').includes(refused));

    // Too deep: the large answers (declared or chunked) fail as the small one does.
    const deep = new Map<string, { status: number; error: unknown; lastError: string | null }>();
    for (const [chain, role] of Object.entries(deepChains)) {
      const r = await getLogs(Number(chain), base);
      const listed = (await send(base, 'GET', '/chains', undefined, { connection: 'close' })).body as { chainId: string; upstreams: { url: string; lastError: string | null }[] }[];
      const upstream = listed.find((c) => c.chainId === chain)!.upstreams[0]!;
      // (The upstream named in the error is this chain's: its role left out for the comparison.)
      deep.set(role, { status: r.status, error: JSON.parse(JSON.stringify(r.body.error).replaceAll(`/${role}`, '/deep')), lastError: upstream.lastError });
      t.is(f.calls.get(`/${chain}/${role}`), 1, `${role}: asked once`);
    }
    t.true(f.length.get('deep-small')! < offThreadFrom && f.length.get('deep-large')! >= offThreadFrom && f.length.get('deep-chunked')! >= offThreadFrom, JSON.stringify([...f.length]));
    const small = deep.get('deep-small')!;
    t.regex(String(small.lastError), /answer nested deeper than 256 levels \(limits\.jsonDepth\)/);
    t.regex(JSON.stringify(small.error), /nested deeper than 256 levels/);
    for (const role of ['deep-large', 'deep-chunked'] as const) t.deepEqual(deep.get(role), small, role);
  });
}
