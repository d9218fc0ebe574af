/**
 * The README's mounting snippets, run as written. Each block marked
 * `<!-- readme-snippet: NAME … -->` in README.md is copied byte for byte into a temporary
 * project whose node_modules has `omnigate` (a link to this checkout, so `import … from
 * 'omnigate'` resolves through package.json's `exports` to the built dist/) and `express`, then
 * run by node as a real child process next to fake upstreams (and a real PostgreSQL for the
 * indexer). The only help it gets: PORT=0, and a preload that prints the port the app listened on.
 */
import test, { type ExecutionContext } from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeUpstream } from '../support/fake-upstream.js';
import { rpc, send } from '../support/gateway.js';
import { startTestDatabase, tempDir } from '../support/pg.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const json = { 'content-type': 'application/json' };

/** The marked fenced blocks of README.md, by name. */
async function readmeSnippets(): Promise<Map<string, string>> {
  const readme = await readFile(path.join(root, 'README.md'), 'utf8');
  const blocks = new Map<string, string>();
  for (const m of readme.matchAll(/^<!-- readme-snippet: ([\w-]+)[^\n]*-->\n```(?:js|ts)\n([\s\S]*?)^```$/gm)) blocks.set(m[1]!, m[2]!);
  return blocks;
}

async function snippet(t: ExecutionContext, name: string): Promise<string> {
  const code = (await readmeSnippets()).get(name);
  if (code === undefined) t.fail(`README.md has no block marked <!-- readme-snippet: ${name} -->`);
  return code ?? '';
}

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

  const child = spawn(process.execPath, ['--import', './report-port.mjs', 'app.mjs'], {
    cwd: dir,
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
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
  t.deepEqual(fakes.map((f) => f.calls), [1, 1]);

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
  t.deepEqual(fakes.map((f) => f.calls), [1, 1], 'no refused request reached an upstream');

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
