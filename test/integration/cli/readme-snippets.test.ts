/**
 * The READMEs' mounting snippets, run as written. Each block marked
 * `<!-- readme-snippet: NAME … -->` in a README.md of the repository (the root's "Use it in your
 * app", or a room's: every tracked README.md is read) is copied byte for byte into a temporary
 * project whose node_modules has `omnigate` (a link to this checkout, so `import … from
 * 'omnigate'` resolves through package.json's `exports` to the built dist/) and `express`, then
 * run by node as a real child process next to fake upstreams (and a real PostgreSQL for the
 * indexer). The only help it gets: PORT=0, and a preload that prints the port the app listened on.
 * The last test runs, the same way, a host app of its own that composes the stages itself.
 */
import test, { type ExecutionContext } from 'ava';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defaultAnswer, startFakeUpstream, type AnswerFn } from '../../support/fake-upstream.js';
import { rpc, send } from '../../support/gateway.js';
import { startTestDatabase, tempDir } from '../../support/pg.js';
import { spawnGroup } from '../../support/procs.js';
import { root as repoRoot } from '../../support/paths.js';

const root = repoRoot;
const json = { 'content-type': 'application/json' };

/** The README.md files of the repository (tracked, or new and not ignored): the root's and the rooms'. */
function readmeFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', '*README.md'], { cwd: root, encoding: 'utf8' });
  return out.split('\n').filter((f) => path.basename(f) === 'README.md' && !f.split('/').includes('node_modules') && existsSync(path.join(root, f)));
}

/** The marked fenced blocks of every README.md, by name (a name marked twice is an error). */
async function readmeSnippets(): Promise<Map<string, { file: string; code: string }>> {
  const blocks = new Map<string, { file: string; code: string }>();
  for (const file of readmeFiles()) {
    const readme = await readFile(path.join(root, file), 'utf8');
    for (const m of readme.matchAll(/^<!-- readme-snippet: ([\w-]+)[^\n]*-->\n```(?:js|ts)\n([\s\S]*?)^```$/gm)) {
      const seen = blocks.get(m[1]!);
      if (seen) throw new Error(`readme-snippet ${m[1]!} is marked twice: in ${seen.file} and ${file}`);
      blocks.set(m[1]!, { file, code: m[2]! });
    }
  }
  return blocks;
}

async function snippet(t: ExecutionContext, name: string): Promise<string> {
  const block = (await readmeSnippets()).get(name);
  if (block === undefined) t.fail(`no README.md has a block marked <!-- readme-snippet: ${name} -->`);
  return block?.code ?? '';
}

test('every marked README snippet is run by a test of this file', async (t) => {
  const names = [...(await readmeSnippets()).keys()].sort();
  t.deepEqual(names, ['mounting-express', 'mounting-indexer'], 'a new readme-snippet needs a test here');
});

const PRELOAD = `import http from 'node:http';
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  this.once('listening', () => process.stdout.write('readme-snippet listening ' + this.address().port + '\\n'));
  return listen.apply(this, args);
};
`;

interface App {
  base: string;
  child: ChildProcess;
  output(): string;
  /** Sends SIGTERM and resolves with how the process ended (fails the test if it does not end). */
  terminate(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Writes the snippet and its files into a fresh project directory and runs it with node. */
async function runSnippet(t: ExecutionContext, code: string, files: Record<string, string>, env: Record<string, string> = {}): Promise<App> {
  t.true(existsSync(path.join(root, 'dist/lib/index.js')), 'dist/ is built (npm run build)');
  const dir = await tempDir('omnigate-readme-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(path.join(dir, 'node_modules'));
  await symlink(root, path.join(dir, 'node_modules/omnigate'), 'dir');
  await symlink(path.join(root, 'node_modules/express'), path.join(dir, 'node_modules/express'), 'dir');
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'host-app', private: true, type: 'module' }));
  await writeFile(path.join(dir, 'app.mjs'), code);
  await writeFile(path.join(dir, 'report-port.mjs'), PRELOAD);
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);

  // In its own process group, stopped in teardown whatever failed, with whatever it started.
  const child = spawnGroup(t, process.execPath, ['--import', './report-port.mjs', 'app.mjs'], {
    cwd: dir,
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const output = () => out;
  const port = await new Promise<number>((resolve, reject) => {
    // A bound so that a snippet that never listens fails the test (and is killed) instead of hanging it.
    const bound = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the snippet did not listen within 60 s:\n${out}`));
    }, 60_000);
    const onData = () => {
      const m = /readme-snippet listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(bound);
        child.stdout!.off('data', onData);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    void exited.then(([exitCode]) => {
      clearTimeout(bound);
      reject(new Error(`the snippet exited (${exitCode}) before listening:\n${out}`));
    });
  });
  return {
    base: `http://127.0.0.1:${port}`,
    child,
    output,
    async terminate() {
      child.kill('SIGTERM');
      // A bound so that a process that never exits fails the test instead of hanging it.
      const bound = setTimeout(() => child.kill('SIGKILL'), 30_000);
      const [code, signal] = await exited;
      clearTimeout(bound);
      return { code, signal };
    },
  };
}

test('README mounting-express: headers, a malformed body as -32700, the collection under /gateway, a host route, SIGTERM exits 0', async (t) => {
  const code = await snippet(t, 'mounting-express');
  t.regex(code, /from 'omnigate'/);
  const fakes = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  const yaml = ['chains:', '  1337:', '    confirmations: 2', '    rpcs:', ...fakes.map((f) => `      - ${f.url}`), ''].join('\n');
  const app = await runSnippet(t, code, { 'omnigate.yaml': yaml });

  const ok = await send(app.base, 'POST', '/gateway/confirmations/2/rpc/1337', JSON.stringify(rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x1'], 5)), json);
  t.is(ok.status, 200, ok.text);
  t.is(ok.body.id, 5);
  t.is(ok.headers['content-type'], 'application/json');
  t.deepEqual(ok.headers['x-checked-urls']?.toString().split(',').sort(), fakes.map((f) => f.url).sort());
  t.is(ok.headers['x-confirmable'], 'true');
  t.true(fakes.some((f) => f.url === ok.headers['x-forwarded-from']));
  t.regex(String(ok.headers['x-json-hash']), /^[0-9a-f]{64}$/);
  t.truthy(ok.headers['x-request-id']);
  t.is(ok.headers['x-required-confirmations'], '2');
  // (the snippet starts the health probes: their calls are not the client's)
  const balances = () => fakes.map((f) => f.requests.filter((r) => (r.body as { method?: string } | undefined)?.method === 'eth_getBalance').length);
  t.deepEqual(balances(), [1, 1]);

  const malformed = await send(app.base, 'POST', '/gateway/rpc/1337', '{"jsonrpc":"2.0","id":1,', json);
  t.is(malformed.status, 400);
  t.is(malformed.headers['content-type'], 'application/json');
  t.is(malformed.body.id, null);
  t.is(malformed.body.error.code, -32700);
  t.notRegex(malformed.text, /<html|<pre>|node_modules/i);

  const collection = await send(app.base, 'GET', '/gateway/collection.json');
  t.is(collection.status, 200);
  const urls = new Set<string>(collection.body.item.flatMap((f: { item: { request: { url: { raw: string } } }[] }) => f.item.map((i) => i.request.url.raw)));
  t.deepEqual([...urls].sort(), ['{{baseUrl}}/gateway/confirmations/{{n}}/rpc/{{chainId}}', '{{baseUrl}}/gateway/rpc/{{chainId}}']);

  t.deepEqual((await send(app.base, 'GET', '/hello')).body, { hello: 'world' });
  t.deepEqual(balances(), [1, 1], 'no refused request reached an upstream');
  t.true(fakes.every((f) => f.requests.some((r) => (r.body as { method?: string } | undefined)?.method === 'eth_blockNumber')), 'the heads are polled');

  t.deepEqual(await app.terminate(), { code: 0, signal: null }, app.output());
});

test('README mounting-indexer: the indexer serves its routes, a host /api route after it is reachable, SIGTERM exits 0', async (t) => {
  const code = await snippet(t, 'mounting-indexer');
  const pg = await startTestDatabase();
  t.teardown(() => pg.close());
  const app = await runSnippet(t, code, {}, { DATABASE_URL: pg.url });

  const list = await send(app.base, 'GET', '/api/pending-transactions/missing-relay');
  t.is(list.status, 200, list.text);
  t.deepEqual(list.body, []);
  t.deepEqual((await send(app.base, 'GET', '/api/app-status')).body, { ok: true });
  const spec = await send(app.base, 'GET', '/openapi.json');
  t.is(spec.status, 200);
  t.deepEqual(spec.body.servers, [{ url: '/' }]);
  const gql = await send(app.base, 'POST', '/graphql', JSON.stringify({ query: '{ __typename }' }), { ...json, accept: 'application/json' });
  t.deepEqual(gql.body, { data: { __typename: 'Query' } });

  t.deepEqual(await app.terminate(), { code: 0, signal: null }, app.output());
});

/**
 * Not a README block: a host app that composes the stages itself from the package entry, as
 * "Composing the stages yourself" describes, with the exports that composition needs
 * (eligibilityPolicy, hedgePolicy/hedgeSettings, composePolicies, createMetrics,
 * startHeadTracker/headSettings, indexerGauges).
 */
const COMPOSED = `import express from 'express';
import {
  loadConfigFile, createRegistry, createMetrics, startHeadTracker, headSettings, eligibilityPolicy,
  hedgePolicy, hedgeSettings, composePolicies, parseJsonRpc, classify, selectUpstreams, fetchParallel, canonicalize, verify, emitHeaders,
  rpcErrorHandler, serviceRoutes, openIndexerDb, indexerApi, indexerGauges,
} from 'omnigate';

const config = await loadConfigFile('omnigate.yaml');
const registry = createRegistry(config);
const metrics = createMetrics(registry);
const heads = startHeadTracker(registry, {
  timeoutMs: 2_000,
  settings: (chain) => headSettings(chain.id, config.heads, config.chains[chain.id]?.heads),
});
await heads.runOnce();
const { db, close } = await openIndexerDb({ databaseUrl: process.env.DATABASE_URL });
const indexer = indexerApi(db);
const gauges = indexerGauges(metrics.registry, indexer.ops);
gauges.start();
await gauges.refresh();

const app = express();
app.post(['/rpc/:chain', '/confirmations/:n/rpc/:chain'],
  parseJsonRpc({ registry, bodyLimit: config.limits.bodyBytes, maxBatchSize: config.limits.batchSize }),
  classify(),
  selectUpstreams(),
  fetchParallel({ upstreamTimeoutMs: config.timeouts.upstreamMs, requestTimeoutMs: config.timeouts.requestMs, maxResponseBytes: config.limits.responseBytes }),
  canonicalize(),
  verify({ metrics, policy: composePolicies(hedgePolicy(hedgeSettings(config.timeouts)), eligibilityPolicy) }),
  emitHeaders({ redactHeaders: true }));
app.use(rpcErrorHandler());
app.use(indexer);
app.use(serviceRoutes({ registry, metrics }));
const server = app.listen(Number(process.env.PORT ?? 8080));

process.once('SIGTERM', async () => {
  await new Promise((resolve) => server.close(resolve));
  heads.stop();
  gauges.stop();
  await registry.close();
  await close();
});
`;

const blockOf = (n: number) => ({ number: `0x${n.toString(16)}`, hash: `0x${n.toString(16).padStart(64, '0')}`, transactions: [] });
/** A node at `head`: it knows blocks up to its head and answers null above it. */
const nodeAt = (head: number): AnswerFn => (call) => {
  if (call.method === 'eth_chainId') return { result: '0x1' };
  if (call.method === 'eth_blockNumber') return { result: `0x${head.toString(16)}` };
  const p = call.params ?? [];
  if (call.method === 'eth_getBlockByNumber' && typeof p[0] === 'string' && p[0].startsWith('0x')) return { result: Number(p[0]) <= head ? blockOf(Number(p[0])) : null };
  return defaultAnswer(call);
};

test('a pipeline composed from the package entry: eligibilityPolicy turns two lagging nulls into -32016, indexerGauges on its /metrics, SIGTERM exits 0', async (t) => {
  const pg = await startTestDatabase();
  t.teardown(() => pg.close());
  const fakes = await Promise.all([startFakeUpstream({ answer: nodeAt(100) }), startFakeUpstream({ answer: nodeAt(100) }), startFakeUpstream({ answer: nodeAt(110) })]);
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  const yaml = ['heads:', '  waitMs: 300', 'chains:', '  1:', '    confirmations: 2', '    rpcs:', ...fakes.map((f) => `      - ${f.url}`), ''].join('\n');
  const app = await runSnippet(t, COMPOSED, { 'omnigate.yaml': yaml }, { DATABASE_URL: pg.url });

  // Without the policy the two nodes at 100 would confirm their null for block 0x69 (105).
  const above = await send(app.base, 'POST', '/rpc/1', JSON.stringify(rpc('eth_getBlockByNumber', ['0x69', false], 3)), json);
  t.is(above.status, 503, above.text);
  t.is(above.body.id, 3);
  t.is(above.body.error.code, -32016);
  t.is(above.body.error.data.block, '0x69');
  t.is(above.headers['x-json-hash'], undefined, 'nothing was confirmed');

  const below = await send(app.base, 'POST', '/rpc/1', JSON.stringify(rpc('eth_getBlockByNumber', ['0x60', false], 4)), json);
  t.is(below.status, 200, below.text);
  t.is(below.headers['x-confirmable'], 'true');
  t.is(below.body.result.number, '0x60');

  const metricsText = (await send(app.base, 'GET', '/metrics')).text;
  t.regex(metricsText, /^omnigate_indexer_stats_up 1$/m);
  t.regex(metricsText, /^omnigate_upstream_up\{/m);
  t.deepEqual((await send(app.base, 'GET', '/api/pending-transactions/missing-relay')).body, []);

  t.deepEqual(await app.terminate(), { code: 0, signal: null }, app.output());
});
