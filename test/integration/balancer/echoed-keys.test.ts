/**
 * Provider keys that upstreams echo back never reach a client, /chains, /metrics or the log:
 * a 404 page and a 200 HTML page quoting the full URL, a 429 and a JSON-RPC quota error naming
 * the key, a provider error quoting the key in an otherwise valid answer, a ws upstream's
 * id-less error, and a host-name key in a DNS error; a refusal quoting the key (not relayed), a
 * refusal or an answer quoting it in another case (not relayed either), a query key with a `+`
 * quoted as sent, and keys across the cut of a quoted text (a write's rejection, a ws message, a
 * rate-limit message). Run through the real CLI, whose log is read.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { WebSocketServer } from 'ws';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { rpc, send, type Reply as GatewayReply } from '../../support/gateway.js';
import { listeningPort, runCli, type Run } from '../../support/cli.js';
import { until } from '../../support/wait.js';

type Reply = { status: number; type: string; body: string };

/** An HTTP upstream at `path` that answers every call with `reply(its own full URL, call id, the request)`. */
async function echoing(t: ExecutionContext, path: string, reply: (url: string, id: unknown, req: http.IncomingMessage) => Reply): Promise<string> {
  let url = '';
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let id: unknown = null;
      try {
        id = (JSON.parse(Buffer.concat(chunks).toString()) as { id?: unknown }).id ?? null;
      } catch {
        // not JSON: id null
      }
      const r = reply(url, id, req);
      res.writeHead(r.status, { 'content-type': r.type }).end(r.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())).then(() => undefined));
  t.teardown(() => server.closeAllConnections());
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return url;
}

/** A ws upstream that answers every message with an id-less error naming the key. */
async function wsEchoing(t: ExecutionContext, key: string): Promise<string> {
  const server = http.createServer();
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('message', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `invalid key ${key}` } }))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const c of wss.clients) c.terminate();
    wss.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws/${key}`;
}

const page = (url: string, key: string) =>
  `<html><body><p>${url} was not found</p><p>${encodeURIComponent(url)}</p><p>Your key ${key} is valid.</p></body></html>`;
const rpcError = (id: unknown, code: number, message: string) => JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });

test('should keep echoed provider keys out of answers, headers, /chains, /metrics and the log', async (t) => {
  const keys = {
    notFound: '5f0c1a2b3c4d5e6f708192a3b4c5d6e7',
    htmlPage: 'Q7wE9rT2yU4iO6pA8sD0fG1hJ3kL5zX7',
    status429: '0123456789abcdef0123456789abcdef',
    quota: 'k3yQuotaK3yQuotaK3yQuota99',
    echo: 'e1c2h3o4e5c6h7o8e1c2h3o4e5c6h7o8',
    echoToo: 'f00dfeedf00dfeedf00dfeedf00dfeed',
    honest: 'a11ce5a11ce5a11ce5a11ce5a11ce5a1',
    ws: 'w5k3yw5k3yw5k3yw5k3yw5k3y',
    // Quoted where a reason cuts the text (the 80-character preview, V8's JSON error snippet):
    // a key must be hidden before the cut, or its first half would remain.
    cut: 'Zq8Xw3Rt6Yu1Io4Pa7Sd0Fg2Hj5Kl9Mn',
    first: 'Lp3Ok6Ij9Uh2Yg5Tf8Rd1Es4Wa7Qz0Xc',
  };
  const hostKey = 'abc123def456ghi789jk';
  const bad = [
    await echoing(t, `/v3/${keys.notFound}`, (url) => ({ status: 404, type: 'text/html', body: page(url, keys.notFound) })),
    await echoing(t, `/v2/${keys.htmlPage}`, (url) => ({ status: 200, type: 'text/html', body: page(url, keys.htmlPage) })),
    await echoing(t, `/rpc?apikey=${keys.status429}`, (_url, id) => ({ status: 429, type: 'application/json', body: rpcError(id, -32005, `key ${keys.status429} exceeded quota`) })),
    await echoing(t, `/${keys.quota}`, (url, id) => ({ status: 200, type: 'application/json', body: rpcError(id, 429, `key ${keys.quota} exceeded quota (${url})`) })),
    await echoing(t, `/v2/${keys.echo}`, (_url, id) => ({ status: 200, type: 'application/json', body: rpcError(id, -32000, `invalid api key ${keys.echo}`) })),
    await wsEchoing(t, keys.ws),
    await echoing(t, `/v1/${keys.cut}`, () => ({ status: 200, type: 'text/plain', body: `${'x'.repeat(70)} ${keys.cut} is not a valid key` })),
    await echoing(t, `/v1/${keys.first}`, () => ({ status: 200, type: 'text/plain', body: `${keys.first} is not a valid key` })),
    `http://${hostKey}.provider.invalid:9/rpc`,
  ];
  const echoToo = await echoing(t, `/v2/${keys.echoToo}`, (_url, id) => ({ status: 200, type: 'application/json', body: rpcError(id, -32000, `unknown key ${keys.echoToo}`) }));
  const honest = await startFakeUpstream({ path: `/v2/${keys.honest}` });
  t.teardown(() => honest.close());

  const dir = await mkdtemp(join(tmpdir(), 'omnigate-keys-'));
  t.teardown(() => rm(dir, { recursive: true }));
  const file = join(dir, 'omnigate.yaml');
  const list = (urls: string[]) => urls.map((u) => `      - "${u}"`).join('\n');
  await writeFile(file, `chains:\n  1:\n    rpcs:\n${list(bad)}\n  1337:\n    rpcs:\n${list([echoToo, honest.url])}\n`);
  const r = runCli(['serve', '--config', file, '--port', '0', '--no-indexer'], { LOG_LEVEL: 'debug' });
  t.teardown(() => r.child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${await listeningPort(r)}`;
  const post = (path: string, body: unknown) => send(base, 'POST', path, JSON.stringify(body), { 'content-type': 'application/json', origin: 'https://any.page.example' });

  // Every upstream of chain 1 fails: the 502 lists each one's reason.
  const failed = await post('/rpc/1', rpc('eth_blockNumber'));
  t.is(failed.status, 502, failed.text);
  const failures = failed.body.error.data.failures as { upstream: string; reason: string }[];
  // The two rate-limited upstreams (an HTTP 429, a JSON-RPC quota error) are on back-off once a
  // probe met them (lib/health/rate-limits.ts): from then on they are not asked, and so not among
  // the failures. Their keys are checked in /chains and the log below.
  const named = (u: string) => (u.includes('.provider.invalid') ? failures.some((f) => f.upstream.includes('.provider.invalid')) : failures.some((f) => f.upstream.includes(new URL(u).host)));
  const skipped = bad.filter((u) => !named(u));
  t.true(skipped.every((u) => u.includes(keys.status429) || u.includes(keys.quota)), `${skipped.join(' ')} ${failed.text}`);
  t.is(failures.length, bad.length - skipped.length, failed.text);
  const reasonOf = (key: string) => failures.find((f) => bad.find((u) => u.includes(key))!.replace(key, '***').startsWith(f.upstream))?.reason ?? '';
  t.regex(reasonOf(keys.htmlPage), /not JSON: .*\*\*\*/, 'the page is quoted, key masked');
  if (!skipped.some((u) => u.includes(keys.quota))) t.regex(reasonOf(keys.quota), /key \*\*\* exceeded quota/);
  t.regex(reasonOf(keys.echo), /quotes this upstream's URL or key/);
  t.regex(reasonOf(keys.ws), /id null: invalid key \*\*\*/);
  t.true(failures.some((f) => f.upstream.includes('***.provider.invalid') && /ENOTFOUND \*\*\*\.provider\.invalid/.test(f.reason)), failed.text);

  // An answer quoting its own key is not forwarded: the honest upstream answers instead.
  const ok = await post('/rpc/1337', rpc('eth_blockNumber'));
  t.is(ok.status, 200, ok.text);
  t.is(ok.headers['x-forwarded-from'], honest.url.replace(keys.honest, '***'));

  // Wait for the first probe round to be recorded (its failures are logged too).
  let chains = await send(base, 'GET', '/chains');
  for (const end = Date.now() + 20_000; (chains.body as { upstreams: { lastProbe: string | null }[] }[]).some((c) => c.upstreams.some((u) => u.lastProbe === null)) && Date.now() < end; ) {
    await new Promise((res) => setTimeout(res, 25));
    chains = await send(base, 'GET', '/chains');
  }
  const chain1 = (chains.body as { chainId: string; upstreams: { url: string; lastError: string | null }[] }[]).find((c) => c.chainId === '1')!;
  t.true(chain1.upstreams.every((u) => u.lastError !== null), chains.text);
  t.true(chain1.upstreams.some((u) => u.lastError!.includes('***')), chains.text);
  const metrics = await send(base, 'GET', '/metrics');
  t.is(metrics.status, 200);

  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
  const log = r.out.join('') + r.err.join('');
  t.regex(log, /health probe failed/);
  t.regex(log, /upstream call failed/);
  const outputs: [string, string][] = [
    ['the 502', failed.text + JSON.stringify(failed.headers)],
    ['the 200', ok.text + JSON.stringify(ok.headers)],
    ['/chains', chains.text],
    ['/metrics', metrics.text],
    ['the log', log],
  ];
  for (const secret of [...Object.values(keys), hostKey]) {
    for (const [where, text] of outputs) t.false(text.toLowerCase().includes(secret.toLowerCase()), `${secret} in ${where}`);
  }
  for (const half of [keys.cut.slice(0, 8), keys.first.slice(0, 8)]) {
    for (const [where, text] of outputs) t.false(text.includes(half), `the first half of a key, ${half}, in ${where}`);
  }
});

test('should keep a user-info key out of everything when an upstream echoes the Authorization header it was sent', async (t) => {
  // The user-info of an upstream URL travels as `Authorization: Basic base64(user:password)`:
  // that header is the key in another form, and providers quote it in their refusals.
  const password = 'Pw9kX2mQ7vR4tL8n';
  const seen: string[] = [];
  const echoAuth = (mode: 'error' | 'page' | 'answer') => async () => {
    const url = await echoing(t, '/rpc', (_url, id, req): Reply => {
      const auth = req.headers.authorization ?? '';
      seen.push(auth);
      const token = auth.replace(/^Basic /, '');
      if (mode === 'page') return { status: 401, type: 'text/plain', body: `bad credentials: ${auth}` };
      if (mode === 'error') return { status: 200, type: 'application/json', body: rpcError(id, -32000, `unknown credentials ${token.replace(/=+$/, '')} (${auth})`) };
      return { status: 200, type: 'application/json', body: JSON.stringify({ jsonrpc: '2.0', id, result: `0x1${Buffer.from(token).toString('hex')}`, note: token }) };
    });
    return url.replace('http://', `http://relayer:${password}@`);
  };
  const failing = [await echoAuth('error')(), await echoAuth('page')()];
  const quoting = await echoAuth('answer')();
  const honest = await startFakeUpstream();
  t.teardown(() => honest.close());

  const { r, base, post } = await serveDebug(t, `chains:\n  1:\n    rpcs:\n${failing.map((u) => `      - "${u}"`).join('\n')}\n  1337:\n    rpcs:\n      - "${quoting}"\n      - "${honest.url}"\n    strategy: priority\n`);

  const failed = await post('/rpc/1', rpc('eth_blockNumber'));
  t.is(failed.status, 502, failed.text);
  t.is((failed.body.error.data.failures as unknown[]).length, 2, failed.text);
  // An answer that quotes the credentials it was sent is not forwarded: the honest upstream answers.
  const ok = await post('/rpc/1337', rpc('eth_blockNumber'));
  t.is(ok.status, 200, ok.text);
  t.is(ok.headers['x-forwarded-from'], honest.url);
  const chains = await send(base, 'GET', '/chains');
  const metrics = await send(base, 'GET', '/metrics');
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);

  const basic = Buffer.from(`relayer:${password}`).toString('base64');
  t.true(seen.includes(`Basic ${basic}`), 'the upstreams were sent the credentials');
  const log = r.out.join('') + r.err.join('');
  t.regex(log, /upstream call failed/);
  for (const [where, text] of [
    ['the 502', failed.text + JSON.stringify(failed.headers)],
    ['the 200', ok.text + JSON.stringify(ok.headers)],
    ['/chains', chains.text],
    ['/metrics', metrics.text],
    ['the log', log],
  ] as const) {
    t.false(text.includes(password), `the password in ${where}`);
    t.false(text.includes(basic.replace(/=+$/, '')), `the Basic credentials in ${where}: ${text.slice(0, 2000)}`);
  }
});

test('should not relay a refusal that quotes the upstream key, alone, in a batch or for a write', async (t) => {
  // A method the provider does not serve is a refusal: with no vote, the first one is relayed as
  // the node wrote it. One naming the key it was sent with is held back as an answer would be.
  const key = 'R3fusalK3yR3fusalK3y77';
  const refusing = await startFakeUpstream({
    path: `/v2/${key}`,
    answer: (c) => (c.method === 'eth_chainId' || c.method === 'eth_blockNumber' ? { result: '0x1' } : { error: { code: -32601, message: `the method is not available for key ${key} (https://rpc.example/v2/${key})` } }),
  });
  t.teardown(() => refusing.close());
  const plain = await echoing(t, '/v2/word', (_url, id) => ({ status: 200, type: 'application/json', body: rpcError(id, -32601, 'the method is not available on this node') }));
  const { r, base, post } = await serveDebug(t, `chains:\n  1:\n    rpcs:\n      - "${refusing.url}"\n  1337:\n    rpcs:\n      - "${plain}"\n`);
  const trace = rpc('debug_traceTransaction', [`0x${'1'.repeat(64)}`]);

  const alone = await post('/rpc/1', trace);
  t.is(alone.status, 502, alone.text);
  t.regex(alone.body.error.data.failures[0].reason, /quotes this upstream's URL or key/);
  const batch = await post('/rpc/1', [trace, rpc('debug_traceTransaction', [`0x${'2'.repeat(64)}`], 2)]);
  t.is(batch.status, 200, batch.text);
  t.deepEqual((batch.body as { error: { code: number } }[]).map((m) => m.error.code), [-32011, -32011]);
  const write = await post('/rpc/1', rpc('eth_sendRawTransaction', ['0x02']));
  t.is(write.status, 502, write.text);
  // A refusal without a key is still relayed as the node wrote it.
  const relayed = await post('/rpc/1337', trace);
  t.is(relayed.status, 200, relayed.text);
  t.deepEqual(relayed.body.error, { code: -32601, message: 'the method is not available on this node' });
  // Still a refusal, not the provider's failure: a client may ask for such methods at will.
  const calls = await send(base, 'GET', '/chains');
  const failures = (calls.body as { chainId: string; upstreams: { failures: number }[] }[]).find((c) => c.chainId === '1')!.upstreams[0]!.failures;
  t.is(failures, 0, calls.text);

  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
  const log = r.out.join('') + r.err.join('');
  for (const [where, text] of [['the answer', alone.text + JSON.stringify(alone.headers)], ['the batch', batch.text], ['the write', write.text], ['/chains', calls.text], ['the log', log]] as const) {
    t.false(text.includes(key), `the key in ${where}`);
  }
});

test('should not relay a refusal or an answer that quotes the upstream key in another case', async (t) => {
  // Providers upper-case what they quote (`INVALID KEY R3FUSAL…`); the scrubber ignores case, and
  // so must the echo check, or the refusal is relayed as written and the answer voted on.
  const key = 'CaseK3yCaseK3y4567';
  const refusing = await startFakeUpstream({
    path: `/v2/${key}`,
    answer: (c) => (c.method === 'eth_chainId' || c.method === 'eth_blockNumber' ? { result: '0x1' } : { error: { code: -32601, message: `METHOD NOT AVAILABLE FOR KEY ${key.toUpperCase()}` } }),
  });
  t.teardown(() => refusing.close());
  const quoting = await echoing(t, `/v2/${key}x`, (_url, id) => ({ status: 200, type: 'application/json', body: JSON.stringify({ jsonrpc: '2.0', id, result: '0x1', note: `served for ${key.toLowerCase()}x` }) }));
  const honest = await startFakeUpstream();
  t.teardown(() => honest.close());
  const { r, post } = await serveDebug(t, `chains:\n  1:\n    rpcs:\n      - "${refusing.url}"\n  1337:\n    rpcs:\n      - "${quoting}"\n      - "${honest.url}"\n    strategy: priority\n`);

  const refused = await post('/rpc/1', rpc('debug_traceTransaction', [`0x${'1'.repeat(64)}`]));
  t.is(refused.status, 502, refused.text);
  t.regex(refused.body.error.data.failures[0].reason, /quotes this upstream's URL or key/);
  const ok = await post('/rpc/1337', rpc('eth_blockNumber'));
  t.is(ok.status, 200, ok.text);
  t.is(ok.headers['x-forwarded-from'], honest.url, 'the quoting answer is not forwarded');
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
  const log = r.out.join('') + r.err.join('');
  for (const [where, text] of [['the 502', refused.text + JSON.stringify(refused.headers)], ['the 200', ok.text + JSON.stringify(ok.headers)], ['the log', log]] as const) {
    t.false(text.toLowerCase().includes(key.toLowerCase()), `the key in ${where}`);
  }
});

test('should keep a query key with a + out of everything when an upstream quotes it as it was sent', async (t) => {
  // A base64 key in the query keeps its `+` on the wire; read as a form value it is a space. The
  // upstream quotes what it received: that form must be hidden and caught as an echo too.
  const key = 'Pl+sK3y/Pl+sK3y12345==';
  const query = `/rpc?apikey=${key}`;
  const page = await echoing(t, query, (url) => ({ status: 200, type: 'text/html', body: `<p>${url} refused: key ${key}</p>` }));
  const quoting = await echoing(t, query.replace('apikey', 'token'), (_url, id) => ({ status: 200, type: 'application/json', body: rpcError(id, -32000, `invalid api key ${key}`) }));
  const honest = await startFakeUpstream();
  t.teardown(() => honest.close());
  const { r, base, post } = await serveDebug(t, `chains:\n  1:\n    rpcs:\n      - "${page}"\n  1337:\n    rpcs:\n      - "${quoting}"\n      - "${honest.url}"\n    strategy: priority\n`);

  const failed = await post('/rpc/1', rpc('eth_blockNumber'));
  t.is(failed.status, 502, failed.text);
  t.regex(failed.body.error.data.failures[0].reason, /not JSON: .*\*\*\*/);
  const ok = await post('/rpc/1337', rpc('eth_blockNumber'));
  t.is(ok.status, 200, ok.text);
  t.is(ok.headers['x-forwarded-from'], honest.url, 'the quoting answer is not forwarded');
  const chains = await send(base, 'GET', '/chains');
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
  const log = r.out.join('') + r.err.join('');
  for (const [where, text] of [['the 502', failed.text], ['the 200', ok.text + JSON.stringify(ok.headers)], ['/chains', chains.text], ['the log', log]] as const) {
    t.false(text.includes('Pl+sK3y'), `the key as sent in ${where}`);
  }
});

test('should hide a key that a write\'s rejection quotes across the cut of its reason', async (t) => {
  // A rejection beside a write with no answer is quoted, cut, in the 504's failures. The key
  // (letters only and short: another upstream's or this one's, it is hidden, not an echo) sits
  // across the cut: hidden before the cut, or its first half would remain.
  const key = 'Qwertyuiopasdf';
  const rejecting = await echoing(t, `/v2/${key}`, (_url, id, req) => {
    const start = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32000,"message":"`;
    return req.method === 'POST' ? { status: 200, type: 'application/json', body: `${start}${'x'.repeat(295 - start.length)}${key} nonce too low"}}` } : { status: 404, type: 'text/plain', body: '' };
  });
  const silent = await startFakeUpstream({ hangIf: (b) => (b as { method?: string }).method === 'eth_sendRawTransaction' });
  t.teardown(() => silent.close());
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-keys-'));
  t.teardown(() => rm(dir, { recursive: true }));
  const file = join(dir, 'omnigate.yaml');
  // A timeout no loaded machine outruns: the silent upstream is cut off below instead (a write
  // that may have reached it is unanswered all the same), so the test does not wait for it.
  await writeFile(file, `timeouts:\n  upstreamMs: 60000\nchains:\n  1337:\n    rpcs:\n      - "${rejecting}"\n      - "${silent.url}"\n    writes:\n      broadcast: all\n`);
  const r = runCli(['serve', '--config', file, '--port', '0', '--no-indexer'], { LOG_LEVEL: 'debug' });
  t.teardown(() => r.child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${await listeningPort(r)}`;
  const sent = send(base, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_sendRawTransaction', ['0x02'])), { 'content-type': 'application/json' });
  await until(() => silent.requests.some((q) => (q.body as { method?: string }).method === 'eth_sendRawTransaction'));
  await silent.close(); // the write reached it, and its connection drops with no answer
  const write = await sent;
  t.is(write.status, 504, write.text);
  const failures = write.body.error.data.failures as { reason: string }[];
  t.true(failures.some((f) => /^rejected it: .*x\*\*\*/.test(f.reason)), write.text);
  t.false(write.text.includes(key.slice(0, 4)), 'no part of the key in the 504');
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
});

test('should hide a key across the cut of a quoted ws message and of a rate-limit message', async (t) => {
  // The text a reason quotes is cut (a ws message's id at 40 characters, an id-null error's and a
  // rate-limit message at 200): a key across the cut must be hidden before it, or half remains.
  const wsKey = 'Zxcvbnmasdfghj';
  const limitKey = 'Poiuytrewqlkjh';
  const server = http.createServer();
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) =>
    ws.on('message', (data) => {
      const id = (JSON.parse(data.toString()) as { id: number }).id;
      if (id % 2 === 1) ws.send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `${'w'.repeat(195)}${wsKey} is not valid` } }));
      else ws.send(JSON.stringify({ jsonrpc: '2.0', id: `${'i'.repeat(35)}${wsKey}`, result: '0x1' }));
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const c of wss.clients) c.terminate();
    wss.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const ws = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws/${wsKey}`;
  const limited = await echoing(t, `/v1/${limitKey}`, (_url, id) => ({ status: 200, type: 'application/json', body: rpcError(id, -32005, `rate limit exceeded ${'r'.repeat(175)}${limitKey} try later`) }));
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-keys-'));
  t.teardown(() => rm(dir, { recursive: true }));
  const file = join(dir, 'omnigate.yaml');
  await writeFile(file, `chains:\n  1:\n    rpcs:\n      - "${ws}"\n      - "${limited}"\n`);
  const r = runCli(['serve', '--config', file, '--port', '0', '--no-indexer'], { LOG_LEVEL: 'debug' });
  t.teardown(() => r.child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${await listeningPort(r)}`;
  const post = () => send(base, 'POST', '/rpc/1', JSON.stringify(rpc('eth_blockNumber')), { 'content-type': 'application/json' });
  const answers = [await post(), await post(), await post()];
  let chains = await send(base, 'GET', '/chains');
  for (let i = 0; i < 200 && (chains.body as { upstreams: { lastProbe: string | null }[] }[])[0]!.upstreams.some((u) => u.lastProbe === null); i++) {
    await new Promise((res) => setTimeout(res, 25));
    chains = await send(base, 'GET', '/chains');
  }
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
  const log = r.out.join('') + r.err.join('');
  const all = answers.map((a) => a.text).join('\n');
  t.regex(all + log, /id null: w+\*\*\*/, 'the id-null message is quoted, key hidden');
  t.regex(chains.text + log, /rate limit exceeded r+\*\*\*/, 'the rate-limit message is quoted, key hidden');
  for (const [where, text] of [['the answers', all], ['/chains', chains.text], ['the log', log]] as const) {
    for (const key of [wsKey, limitKey]) t.false(text.includes(key.slice(0, 4)), `part of ${key} in ${where}`);
  }
});

/** `omnigate serve` with this YAML and debug logs, on port 0; killed in teardown. */
async function serveDebug(t: ExecutionContext, yaml: string): Promise<{ r: Run; base: string; post(path: string, body: unknown): Promise<GatewayReply> }> {
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-keys-'));
  t.teardown(() => rm(dir, { recursive: true }));
  const file = join(dir, 'omnigate.yaml');
  await writeFile(file, yaml);
  const r = runCli(['serve', '--config', file, '--port', '0', '--no-indexer'], { LOG_LEVEL: 'debug' });
  t.teardown(() => r.child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${await listeningPort(r)}`;
  return { r, base, post: (path, body) => send(base, 'POST', path, JSON.stringify(body), { 'content-type': 'application/json' }) };
}
