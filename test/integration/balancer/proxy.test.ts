/**
 * An egress proxy in the way: a small proxy written here with node:http (CONNECT tunnels for
 * https upstreams, absolute-form requests for http ones) carries the upstream calls when
 * `upstreams.proxy` or HTTPS_PROXY names it, and NO_PROXY bypasses it, on either HTTP client
 * (`upstreams.client`: node, undici).
 * test/fixtures/tls holds a self-signed certificate for localhost (the https upstream's).
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { HttpProxyAgent } from 'http-proxy-agent';
import { rpcPipeline } from '../../../middleware/index.js';
import { createHttpTransport } from '../../../lib/upstream/transport/http.js';
import { createUndiciTransport } from '../../../lib/upstream/transport/undici.js';
import { Cancellation, UpstreamCallError } from '../../../lib/upstream/transport/contract.js';
import { listeningPort, runCli, configFile } from '../../support/cli.js';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { makeConfig, rpc, send, startGateway } from '../../support/gateway.js';
import { urlFromRoot } from '../../support/paths.js';

const fixtures = urlFromRoot('test/fixtures/tls/');
const cert = readFileSync(new URL('localhost.crt', fixtures));
const key = readFileSync(new URL('localhost.key', fixtures));

/** The proxy: what it carried, one line per request or tunnel (`CONNECT host:port`, `POST http://…`). */
async function startProxy(t: ExecutionContext) {
  const carried: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    carried.push(`${req.method} ${req.url}`);
    const target = new URL(req.url!);
    const out = http.request(
      { hostname: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers: req.headers, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    carried.push(`CONNECT ${req.url}`);
    const at = req.url!.lastIndexOf(':');
    const upstream = net.connect(Number(req.url!.slice(at + 1)), req.url!.slice(0, at).replace(/^\[|\]$/g, ''), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, carried };
}

/** An https upstream on localhost (the fixture's certificate) that answers every call with result 0x1. */
async function startHttpsUpstream(t: ExecutionContext) {
  let calls = 0;
  const server = https.createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      calls += 1;
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: '0x1' }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://localhost:${port}/v2/KEY`,
    hostPort: `localhost:${port}`,
    get calls() {
      return calls;
    },
  };
}

const call = {
  payload: { calls: [], batch: false, raw: Buffer.from('{"jsonrpc":"2.0","id":5,"method":"eth_chainId","params":[]}') },
  requestId: 'proxy-test',
  signal: new Cancellation(),
  timeoutMs: 10_000,
  maxBytes: 1_000_000,
};

const clients = [
  ['node', createHttpTransport],
  ['undici', createUndiciTransport],
] as const;

for (const [client, createTransport] of clients) {
  test(`${client}: upstreams.proxy carries the calls to an http upstream (absolute-form requests)`, async (t) => {
    const proxy = await startProxy(t);
    const upstream = await startFakeUpstream({ path: '/v2/KEY' });
    t.teardown(() => upstream.close());
    const gw = await startGateway({ upstreams: { client, proxy: proxy.url }, chains: { 1: { rpcs: [upstream.url] } } });
    t.teardown(() => gw.close());

    const reply = await gw.post('/rpc/1', rpc('eth_chainId'));

    t.is(reply.status, 200);
    t.is(reply.body.result, '0x539');
    t.deepEqual(proxy.carried, [`POST ${upstream.url}`]);
    t.is(upstream.calls, 1);
  });

  test(`${client}: a proxy URL carries an https upstream in a CONNECT tunnel, and the upstream certificate is still verified`, async (t) => {
    const proxy = await startProxy(t);
    const upstream = await startHttpsUpstream(t);
    const trusted = createTransport(upstream.url, { proxy: proxy.url, tls: { ca: cert } });
    const untrusted = createTransport(upstream.url, { proxy: proxy.url });
    t.teardown(async () => {
      await trusted.close();
      await untrusted.close();
    });

    t.is((await trusted.send(call)).body.toString(), '{"jsonrpc":"2.0","id":5,"result":"0x1"}');
    // (undici takes a freed connection back one turn of the event loop later.)
    await new Promise((r) => setImmediate(r));
    t.is((await trusted.send(call)).body.toString(), '{"jsonrpc":"2.0","id":5,"result":"0x1"}');
    t.deepEqual(proxy.carried, [`CONNECT ${upstream.hostPort}`], 'one tunnel, kept alive for the second call');
    const err = await untrusted.send(call).then(
      () => undefined,
      (e: Error) => e,
    );
    t.regex(String(err?.message), /self-signed|SELF_SIGNED/i);
    t.false((err as UpstreamCallError).sent, 'the handshake in the tunnel failed before the request was written');
    t.is(upstream.calls, 2);
  });

  test(`${client}: a proxy that refuses the tunnel, or is not there, fails the call with sent: false`, async (t) => {
    const refusing = http.createServer((_req, res) => res.writeHead(403).end());
    refusing.on('connect', (_req: http.IncomingMessage, client: net.Socket) => client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n'));
    refusing.listen(0, '127.0.0.1');
    await once(refusing, 'listening');
    t.teardown(() => {
      refusing.closeAllConnections();
      refusing.close();
    });
    const gone = http.createServer();
    gone.listen(0, '127.0.0.1');
    await once(gone, 'listening');
    const goneUrl = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
    gone.close();
    const upstream = await startHttpsUpstream(t);
    for (const proxy of [`http://127.0.0.1:${(refusing.address() as AddressInfo).port}`, goneUrl]) {
      const transport = createTransport(upstream.url, { proxy, tls: { ca: cert } });
      t.teardown(() => transport.close());
      const err = await transport.send(call).then(
        () => undefined,
        (e: unknown) => e,
      );
      t.true(err instanceof UpstreamCallError, String(err));
      t.false((err as UpstreamCallError).sent, `${proxy}: ${(err as Error).message}`);
      t.regex((err as Error).message, /the proxy refused the tunnel: HTTP 403|ECONNREFUSED/);
    }
    t.is(upstream.calls, 0);
  });
}

/** `omnigate serve` (the real CLI) for one https upstream, with the given environment. */
async function serve(t: ExecutionContext, upstreamUrl: string, env: Record<string, string>, client: 'node' | 'undici') {
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-proxy-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'omnigate.yaml');
  await writeFile(file, `upstreams:\n  client: ${client}\nchains:\n  1:\n    rpcs: ["${upstreamUrl}"]\n`);
  await writeFile(join(dir, 'ca.crt'), cert);
  // Cleared first so that the machine's own proxy settings play no part.
  const clean = { HTTPS_PROXY: '', https_proxy: '', HTTP_PROXY: '', http_proxy: '', ALL_PROXY: '', all_proxy: '', NO_PROXY: '', no_proxy: '' };
  const r = runCli(['serve', '--config', file, '--port', '0', '--no-indexer'], { ...clean, NODE_EXTRA_CA_CERTS: join(dir, 'ca.crt'), ...env }, { t });
  const port = await listeningPort(r);
  return (body: unknown) => send(`http://127.0.0.1:${port}`, 'POST', '/rpc/1', JSON.stringify(body), { 'content-type': 'application/json' });
}

for (const [client] of clients) {
  test(`${client}: HTTPS_PROXY in the environment carries the calls of \`omnigate serve\``, async (t) => {
    const proxy = await startProxy(t);
    const upstream = await startHttpsUpstream(t);
    const post = await serve(t, upstream.url, { HTTPS_PROXY: proxy.url }, client);

    const reply = await post(rpc('eth_chainId'));

    t.is(reply.status, 200);
    t.is(reply.body.result, '0x1');
    t.true(proxy.carried.length >= 1);
    t.true(proxy.carried.every((line) => line === `CONNECT ${upstream.hostPort}`), proxy.carried.join('; '));
  });

  test(`${client}: NO_PROXY bypasses HTTPS_PROXY for the hosts it names`, async (t) => {
    const proxy = await startProxy(t);
    const upstream = await startHttpsUpstream(t);
    const post = await serve(t, upstream.url, { HTTPS_PROXY: proxy.url, NO_PROXY: 'localhost' }, client);

    const reply = await post(rpc('eth_chainId'));

    t.is(reply.status, 200);
    t.is(reply.body.result, '0x1');
    t.true(upstream.calls >= 1);
    t.deepEqual(proxy.carried, []);
  });
}

test('an HTTPS_PROXY that is not an http(s) URL stops `omnigate serve` with exit 2 naming the variables, never its password', async (t) => {
  const file = await configFile(t, 'chains:\n  1:\n    rpcs: ["https://eth.example/v2/x", "http://eth.example:8545"]\n', 'omnigate-proxy-');
  const clean = { HTTPS_PROXY: '', https_proxy: '', HTTP_PROXY: '', http_proxy: '', ALL_PROXY: '', all_proxy: '', NO_PROXY: '', no_proxy: '' };
  for (const [env, scheme] of [
    [{ HTTPS_PROXY: 'http://user:proxy-secret-99@proxy.internal:99999' }, 'https'],
    [{ HTTP_PROXY: 'http://user:proxy-secret-99@[proxy.internal:3128' }, 'http'],
    [{ ALL_PROXY: 'socks5://user:proxy-secret-99@proxy.internal:1080' }, 'https'],
  ] as const) {
    const r = runCli(['serve', '--config', file, '--port', '0', '--no-indexer'], { ...clean, ...env }, { t });
    t.is(await r.exited, 2, JSON.stringify(env));
    const err = r.err.join('');
    t.regex(err, new RegExp(`^omnigate: environment: invalid config:\\n  - the proxy the environment names for ${scheme} upstreams \\(${scheme.toUpperCase()}_PROXY, ${scheme}_proxy, ALL_PROXY or all_proxy\\) is not an http:// or https:// URL`), err);
    t.false((err + r.out.join('')).includes('proxy-secret-99'));
  }
});

test('an agent handed to rpcPipeline carries the calls: for every upstream (agent) or by URL (agents)', async (t) => {
  const proxy = await startProxy(t);
  const a = await startFakeUpstream({ path: '/a' });
  const b = await startFakeUpstream({ path: '/b' });
  t.teardown(() => Promise.all([a.close(), b.close()]));
  const config = makeConfig({ chains: { 1: { rpcs: [a.url] }, 2: { rpcs: [b.url] } } });
  // The user's agent: here a proxy agent, as an embedding program would build one.
  const agent = new HttpProxyAgent(proxy.url, { keepAlive: true });
  t.teardown(() => agent.destroy());

  const everyUpstream = rpcPipeline(config, { agent });
  const byUrl = rpcPipeline(config, { agents: (url) => (url === b.url ? agent : undefined) });
  for (const rpcHandler of [everyUpstream, byUrl]) {
    const server = http.createServer((req, res) => rpcHandler(req, res, () => res.writeHead(404).end()));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.teardown(async () => {
      server.closeAllConnections();
      server.close();
      await rpcHandler.close();
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const chain of [1, 2]) {
      const reply = await send(base, 'POST', `/rpc/${chain}`, JSON.stringify(rpc('eth_chainId')), { 'content-type': 'application/json' });
      t.is(reply.status, 200);
    }
  }

  // agent: both chains through the proxy; agents: only b's upstream.
  t.deepEqual(proxy.carried, [`POST ${a.url}`, `POST ${b.url}`, `POST ${b.url}`]);
  t.is(a.calls, 2);
  t.is(b.calls, 2);
});

for (const [client] of clients) {
  test(`${client}: a proxy that quotes the credentials it was sent: its password is never shown`, async (t) => {
    // A proxy whose page (a portal's, a misconfigured one's) quotes the Proxy-Authorization it got
    // and the user-info: for an http upstream its answer is the call's, quoted in the failure's reason.
    const password = 'pr0xyS3cretPw';
    const basic = Buffer.from(`proxyuser:${password}`).toString('base64');
    const seen: string[] = [];
    const proxy = http.createServer((req, res) => {
      const auth = req.headers['proxy-authorization'] ?? '';
      seen.push(auth);
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`denied: ${auth} (${Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString()})`);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => (proxy.closeAllConnections(), proxy.close(() => resolve()))));
    const proxyUrl = `http://proxyuser:${password}@127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const file = await configFile(t, `upstreams:\n  client: ${client}\nchains:\n  1:\n    rpcs: ["http://127.0.0.1:9/rpc"]\n`, 'omnigate-proxy-');
    const clean = { HTTPS_PROXY: '', https_proxy: '', HTTP_PROXY: '', http_proxy: '', ALL_PROXY: '', all_proxy: '', NO_PROXY: '', no_proxy: '' };
    const r = runCli(['serve', '--config', file, '--port', '0', '--no-indexer'], { ...clean, HTTP_PROXY: proxyUrl, LOG_LEVEL: 'debug' }, { t });
    const base = `http://127.0.0.1:${await listeningPort(r)}`;
    const failed = await send(base, 'POST', '/rpc/1', JSON.stringify(rpc('eth_blockNumber')), { 'content-type': 'application/json' });
    t.is(failed.status, 502, failed.text);
    t.regex(failed.body.error.data.failures[0].reason, /not JSON/);
    const chains = await send(base, 'GET', '/chains');
    const metrics = await send(base, 'GET', '/metrics');
    r.child.kill('SIGTERM');
    t.is(await r.exited, 0);
    t.true(seen.includes(`Basic ${basic}`), 'the calls went through the proxy with its credentials');
    const log = r.out.join('') + r.err.join('');
    for (const [where, text] of [['the 502', failed.text + JSON.stringify(failed.headers)], ['/chains', chains.text], ['/metrics', metrics.text], ['the log', log]] as const) {
      t.false(text.includes(password), `the proxy's password in ${where}: ${text.slice(0, 1500)}`);
      t.false(text.includes(basic.replace(/=+$/, '')), `the proxy's Basic credentials in ${where}`);
    }
  });
}
