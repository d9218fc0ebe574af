/**
 * Request loops on the wire: a gateway whose config lists its own URL, and two gateways that
 * list each other. Our own call coming back is refused at once (508, -32014), the upstream that
 * loops is taken out of rotation, named in /chains and logged once, and one client request or
 * probe costs a bounded number of requests (each server counts what it received).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import connect from 'connect';
import { createCliLogger } from '../../../lib/cli/logger.js';
import { maxHops, viaEntry } from '../../../lib/upstream/loop.js';
import { redactUrl } from '../../../lib/upstream/redact.js';
import { probeChain } from '../../../lib/health/probe.js';
import { rpcPipeline, type RpcPipeline } from '../../../middleware/index.js';
import { startFakeUpstream, startFakeWsUpstream } from '../../support/fake-upstream.js';
import { makeConfig, rpc, send, startGateway } from '../../support/gateway.js';

interface Node {
  url: string;
  /** Requests this server received, in order (path and Via). */
  received: { path: string; via: string | undefined }[];
  rpc?: RpcPipeline;
  lines: string[];
}

/** A server listening on port 0 before its config exists, so that the config can name it. */
async function listening(t: ExecutionContext): Promise<{ node: Node; mount(raw: Record<string, unknown>): RpcPipeline }> {
  const node: Node = { url: '', received: [], lines: [] };
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => {
    node.received.push({ path: req.url ?? '', via: req.headers.via });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  node.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await node.rpc?.close();
  });
  return {
    node,
    mount(raw) {
      const logger = createCliLogger({ level: 'info', write: (l) => node.lines.push(l) });
      node.rpc = rpcPipeline(makeConfig(raw), { logger });
      handler = connect().use(node.rpc as connect.NextHandleFunction) as unknown as http.RequestListener;
      return node.rpc;
    },
  };
}

const call = (base: string, body: unknown, headers: Record<string, string> = {}) =>
  send(base, 'POST', '/rpc/1337', JSON.stringify(body), { 'content-type': 'application/json', ...headers });
const loopLines = (node: Node) => node.lines.filter((l) => l.includes('request loop') && l.includes('out of rotation'));

test('should refuse its own call at once, take the self upstream out of rotation and answer from the others', async (t) => {
  const honest = await startFakeUpstream();
  t.teardown(() => honest.close());
  const { node, mount } = await listening(t);
  const self = `${node.url}/rpc/1337`;
  const gw = mount({ chains: { 1337: { rpcs: [self, honest.url] } } });

  const first = await call(node.url, rpc('eth_blockNumber'));
  t.is(first.status, 200, first.text);
  t.is(first.headers['x-forwarded-from'], honest.url);
  t.is(node.received.length, 2, 'the client request and one call to itself, refused');
  t.regex(node.received[1]!.via ?? '', /^1\.1 omnigate-[\w-]+$/);
  t.is(honest.calls, 1);

  const second = await call(node.url, rpc('eth_blockNumber'));
  t.is(second.status, 200);
  t.is(node.received.length, 3, 'the self upstream is not called again');

  // The probe leaves it alone too.
  await probeChain(gw.registry.chains.get('1337')!, 2_000);
  t.is(node.received.length, 3, 'no probe to a known loop');

  const chains = await send(node.url, 'GET', '/chains');
  const upstreams = chains.body[0].upstreams as { url: string; state: string; lastError: string | null }[];
  t.like(upstreams[0], { url: redactUrl(self), state: 'loop' });
  t.regex(upstreams[0]!.lastError ?? '', /request loop: this upstream is the gateway itself/);
  t.is(upstreams[1]!.state, 'healthy');
  t.is(loopLines(node).length, 1, 'logged once');
  t.regex(loopLines(node)[0]!, /"level":"error"/);
  const metrics = await send(node.url, 'GET', '/metrics');
  t.regex(metrics.text, new RegExp(`omnigate_upstream_up\\{chain="1337",upstream="${redactUrl(self).replace(/[.*+?/]/g, '\\$&')}"\\} 0`));
});

test('should find the loop with its first probe: one refused request (the probe stops at its chain id), one log line', async (t) => {
  const honest = await startFakeUpstream();
  t.teardown(() => honest.close());
  const { node, mount } = await listening(t);
  const gw = mount({ chains: { 1337: { rpcs: [`${node.url}/rpc/1337`, honest.url] } } });
  await probeChain(gw.registry.chains.get('1337')!, 2_000);
  t.is(node.received.length, 1, 'the chain id, refused: the head is not asked');
  t.is(loopLines(node).length, 1);
  t.false(node.lines.some((l) => l.includes('health probe failed')), 'the loop is not also logged as a failed probe');
  const r = await call(node.url, rpc('eth_blockNumber'));
  t.is(r.status, 200);
  t.is(node.received.length, 2, 'the client request only');
});

test('should answer 508 with -32014 to a request that carries its own Via token', async (t) => {
  const { node, mount } = await listening(t);
  const gw = mount({ chains: { 1337: { rpcs: [`${node.url}/rpc/1337`] } } });
  const token = gw.registry.chains.get('1337')!.upstreams[0]!.hopToken;
  const r = await call(node.url, rpc('eth_blockNumber', [], 7), { via: `1.1 nginx, ${viaEntry(token)}` });
  t.is(r.status, 508);
  t.is(r.body.error.code, -32014);
  t.regex(r.body.error.message, /^Request loop: this upstream is the gateway itself/);
  t.is(node.received.length, 1);
});

test('should break a two-gateway cycle A → B → A after one round trip', async (t) => {
  const a = await listening(t);
  const b = await listening(t);
  a.mount({ timeouts: { hedgeMs: 0 }, chains: { 1337: { rpcs: [`${b.node.url}/rpc/1337`] } } });
  b.mount({ timeouts: { hedgeMs: 0 }, chains: { 1337: { rpcs: [`${a.node.url}/rpc/1337`] } } });

  const r = await call(a.node.url, rpc('eth_blockNumber'));
  t.is(r.status, 502, r.text);
  t.is(a.node.received.length, 2, 'A: the client request, then its own call back from B (refused)');
  t.is(b.node.received.length, 1, 'B: A\'s call');
  const via = a.node.received[1]!.via ?? '';
  t.is(via.split(',').length, 2, `A's entry travelled through B: ${via}`);
  t.is(loopLines(a.node).length, 1);

  // A no longer calls B: the cycle is broken for the next request.
  const again = await call(a.node.url, rpc('eth_blockNumber'));
  t.is(again.status, 400, again.text); // no usable upstream left on chain 1337
  t.is(b.node.received.length, 1);
});

test('should refuse a request that went through more than maxHops gateways, and pass on the entries it got', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const gw = await startGateway({ chains: { 1337: { rpcs: [fake.url] } } });
  t.teardown(() => gw.close());
  const entries = (n: number) => Array.from({ length: n }, (_, i) => viaEntry(`other${i}`)).join(', ');

  const long = await gw.post('/rpc/1337', rpc('eth_blockNumber'), { via: entries(maxHops + 1) });
  t.is(long.status, 508);
  t.is(long.body.error.code, -32014);
  t.is(fake.calls, 0);

  const ok = await gw.post('/rpc/1337', rpc('eth_blockNumber'), { via: `1.1 nginx, ${entries(2)}` });
  t.is(ok.status, 200, ok.text);
  const token = gw.rpc.registry.chains.get('1337')!.upstreams[0]!.hopToken;
  t.is(fake.requests.at(-1)!.headers.via, `${entries(2)}, ${viaEntry(token)}`, 'omnigate entries passed on, ours last, others dropped');
});

test('should send its Via entry on a ws upstream\'s handshake, one token per upstream', async (t) => {
  const [ws, plain] = await Promise.all([startFakeWsUpstream(), startFakeUpstream()]);
  t.teardown(() => Promise.all([ws.close(), plain.close()]).then(() => undefined));
  const gw = await startGateway({ chains: { 1337: { rpcs: [ws.url, plain.url], confirmations: 2 } } });
  t.teardown(() => gw.close());
  const pinned = rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x1']);
  t.is((await gw.post('/rpc/1337', pinned)).headers['x-required-confirmations'], '2');
  const [first, second] = gw.rpc.registry.chains.get('1337')!.upstreams;
  t.not(first!.hopToken, second!.hopToken);
  t.is(ws.requests[0]!.headers.via, viaEntry(first!.hopToken));
  t.is(plain.requests[0]!.headers.via, viaEntry(second!.hopToken));
});
