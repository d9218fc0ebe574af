/**
 * WebSocket upstreams behind the pipeline: what a client's call may do to the one connection
 * omnigate shares between every request to that upstream.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { WebSocketServer } from 'ws';
import { rpc, startGateway } from '../../support/gateway.js';

/** A ws node that serves subscriptions: each eth_subscribe starts a stream of notifications on the connection. */
async function subscribingNode() {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  const methods: string[] = [];
  let subscriptions = 0;
  server.on('connection', (socket) => {
    socket.on('message', (data) => {
      const m = JSON.parse(data.toString()) as { id: number; method: string };
      methods.push(m.method);
      if (m.method === 'eth_subscribe') {
        const sub = `0x${(++subscriptions).toString(16)}`;
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: sub }));
        const timer = setInterval(() => socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription: sub, result: { number: '0x10' } } })), 5);
        socket.on('close', () => clearInterval(timer));
        return;
      }
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: m.method === 'eth_chainId' ? '0x1' : '0x10' }));
    });
  });
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    methods,
    close: () => new Promise<void>((resolve) => { server.clients.forEach((c) => c.terminate()); server.close(() => resolve()); }),
  };
}

for (const method of ['eth_subscribe', 'eth_unsubscribe']) {
  test(`${method} is refused by omnigate: never sent on a ws upstream's shared connection`, async (t) => {
    const node = await subscribingNode();
    const gw = await startGateway({ timeouts: { hedgeMs: 0 }, chains: { 1: { rpcs: [node.url] } } });
    t.teardown(() => Promise.all([gw.close(), node.close()]));
    const r = await gw.post('/rpc/1', rpc(method, method === 'eth_subscribe' ? ['newHeads'] : ['0x1'], 'sub-1'));
    t.is(r.status, 200, 'HTTP 200, as a node answers a method it does not serve over HTTP');
    t.is(r.headers['x-confirmable'], 'false');
    t.is(r.headers['x-required-confirmations'], '1');
    t.is(r.body.id, 'sub-1');
    t.is(r.body.error?.code, -32601);
    t.regex(r.body.error.message, /subscri/);
    t.false(node.methods.includes(method), 'the upstream never received it');
    // In a batch: that member's own error, the others answered.
    const b = await gw.post('/rpc/1', [rpc('eth_blockNumber', [], 1), rpc(method, ['newHeads'], 2)]);
    t.is(b.status, 200);
    t.is(b.body[0].result, '0x10');
    t.is(b.body[1].id, 2);
    t.is(b.body[1].error?.code, -32601);
    t.false(node.methods.includes(method));
  });
}
