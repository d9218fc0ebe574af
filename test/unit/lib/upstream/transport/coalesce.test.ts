import test from 'ava';
import { BatchCoalescer, splitAnswer } from '../../../../../lib/upstream/transport/coalesce.js';
import type { Upstream } from '../../../../../lib/upstream/registry.js';
import { Cancellation, UpstreamCallError, type UpstreamRequest, type UpstreamResponse } from '../../../../../lib/upstream/transport/contract.js';
import type { RpcCall } from '../../../../../lib/jsonrpc/types.js';

interface Sent {
  request: UpstreamRequest;
  resolve(body: string): void;
  reject(err: Error): void;
}

/** An upstream whose transport records each request and lets the test answer it. */
function fakeUpstream(url = 'http://127.0.0.1:1') {
  const sent: Sent[] = [];
  const upstream = {
    url,
    transport: {
      send: (request: UpstreamRequest) =>
        new Promise<UpstreamResponse>((resolve, reject) => {
          sent.push({ request, resolve: (body) => resolve({ body: Buffer.from(body) }), reject });
          request.signal.addEventListener('abort', () => reject(new UpstreamCallError('aborted', 'call aborted')));
        }),
      close: async () => {},
    },
  } as unknown as Upstream;
  return { upstream, sent };
}

const call = (id: number | string, method = 'eth_chainId'): RpcCall => ({ id, method, params: [] });
const raw = (c: RpcCall) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...c }));
function request(c: RpcCall, signal = new Cancellation(), maxBytes = 1000): UpstreamRequest {
  return { payload: { calls: [c], batch: false, raw: raw(c) }, requestId: 'r', signal, timeoutMs: 30_000, maxBytes };
}
const turn = () => new Promise((resolve) => setImmediate(resolve));

test('calls to one upstream in one turn go as one batch; the answer is split by id, bytes as sent', async (t) => {
  const { upstream, sent } = fakeUpstream();
  const co = new BatchCoalescer();
  const calls = [call(1), call('b'), call(3)];
  const answers = calls.map((c) => co.send(upstream, request(c), c));
  await turn();
  t.is(sent.length, 1);
  t.is(sent[0]!.request.payload.raw.toString(), `[${calls.map((c) => raw(c).toString()).join(',')}]`);
  t.true(sent[0]!.request.payload.batch);
  t.is(sent[0]!.request.maxBytes, 3000, 'the members limits added');
  // answered out of order, with a number JSON.parse would round and a repeated id key
  sent[0]!.resolve('[ {"jsonrpc":"2.0","id":3,"result":12345678901234567890} , {"id":7,"jsonrpc":"2.0","id":1,"result":"0x1"},{"jsonrpc":"2.0","id":"b","result":{"id":1}}]');
  const bodies = (await Promise.all(answers)).map((r) => r.body.toString());
  t.deepEqual(bodies, ['{"id":7,"jsonrpc":"2.0","id":1,"result":"0x1"}', '{"jsonrpc":"2.0","id":"b","result":{"id":1}}', '{"jsonrpc":"2.0","id":3,"result":12345678901234567890}']);
});

test('a call alone in its turn is sent alone; members with the same id go in separate batches', async (t) => {
  const { upstream, sent } = fakeUpstream();
  const co = new BatchCoalescer();
  const alone = co.send(upstream, request(call(1)), call(1));
  await turn();
  t.is(sent.length, 1);
  t.false(sent[0]!.request.payload.batch);
  sent[0]!.resolve('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
  t.is((await alone).body.toString(), '{"jsonrpc":"2.0","id":1,"result":"0x1"}');
  const same = [call(1), call(1, 'eth_blockNumber'), call(2)];
  const answers = same.map((c) => co.send(upstream, request(c), c));
  await turn();
  t.is(sent.length, 3);
  t.is(sent[1]!.request.payload.calls.length, 2, 'ids 1 and 2');
  t.deepEqual(sent[1]!.request.payload.calls.map((c) => c.id), [1, 2]);
  t.is(sent[2]!.request.payload.raw.toString(), raw(same[1]!).toString(), 'the second id 1 alone');
  sent[1]!.resolve('[{"jsonrpc":"2.0","id":2,"result":"b"},{"jsonrpc":"2.0","id":1,"result":"a"}]');
  sent[2]!.resolve('{"jsonrpc":"2.0","id":1,"result":"c"}');
  t.deepEqual((await Promise.all(answers)).map((r) => JSON.parse(r.body.toString()).result), ['a', 'c', 'b']);
});

test('a mangled batch answer or a failed call fails every member; a single object makes them go alone', async (t) => {
  for (const [answer, reason] of [
    ['{"jsonrpc":"2.0","id":1,"result":"0x1"', /not a JSON array/],
    ['[{"jsonrpc":"2.0","id":1,"result":"0x1"}]', /no answer for id 2/],
    ['[{"jsonrpc":"2.0","id":1,"result":"0x1"},{"jsonrpc":"2.0","id":1,"result":"0x1"}]', /id 1 answered more than once/],
    ['[{"jsonrpc":"2.0","id":1,"result":"0x1"},{"jsonrpc":"2.0","id":"2","result":"0x1"}]', /id "2" was not asked/],
    ['[{"jsonrpc":"2.0","id":1,"result":"0x1"},5]', /element 1 is not an answer object/],
    ['[{"jsonrpc":"2.0","id":1,"result":"0x1"},{"jsonrpc":"2.0","id":2,"result":"0x1"}] x', /not a JSON array/],
  ] as const) {
    const { upstream, sent } = fakeUpstream();
    const co = new BatchCoalescer();
    const answers = [call(1), call(2)].map((c) => co.send(upstream, request(c), c));
    await turn();
    sent[0]!.resolve(answer);
    for (const a of answers) await t.throwsAsync(a, { message: reason }, answer);
  }
  const { upstream, sent } = fakeUpstream();
  const co = new BatchCoalescer();
  const failed = [call(1), call(2)].map((c) => co.send(upstream, request(c), c));
  await turn();
  sent[0]!.reject(new UpstreamCallError('http-status', 'HTTP 500'));
  for (const a of failed) await t.throwsAsync(a, { message: 'HTTP 500' });

  const refusing = fakeUpstream('http://127.0.0.1:2');
  const answers = [call(1), call(2)].map((c) => co.send(refusing.upstream, request(c), c));
  await turn();
  refusing.sent[0]!.resolve('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batches are not supported"}}');
  await turn();
  t.is(refusing.sent.length, 3, 'each call again alone');
  refusing.sent[1]!.resolve('{"jsonrpc":"2.0","id":1,"result":"a"}');
  refusing.sent[2]!.resolve('{"jsonrpc":"2.0","id":2,"result":"b"}');
  t.deepEqual((await Promise.all(answers)).map((r) => JSON.parse(r.body.toString()).result), ['a', 'b']);
  // and the next batch's calls to it go alone at once
  const later = [call(1), call(2)].map((c) => co.send(refusing.upstream, request(c), c));
  t.is(refusing.sent.length, 5);
  refusing.sent[3]!.resolve('{"jsonrpc":"2.0","id":1,"result":"a"}');
  refusing.sent[4]!.resolve('{"jsonrpc":"2.0","id":2,"result":"b"}');
  await Promise.all(later);
});

test('a member that aborts stops waiting; the shared call is aborted only when every member aborted', async (t) => {
  const { upstream, sent } = fakeUpstream();
  const co = new BatchCoalescer();
  const signals = [new Cancellation(), new Cancellation(), new Cancellation()];
  const answers = [call(1), call(2), call(3)].map((c, i) => co.send(upstream, request(c, signals[i]), c));
  await turn();
  const shared = sent[0]!.request.signal;
  signals[0]!.abort();
  await t.throwsAsync(answers[0]!, { instanceOf: UpstreamCallError, message: 'call aborted' });
  signals[1]!.abort();
  await t.throwsAsync(answers[1]!, { message: 'call aborted' });
  t.false(shared.aborted, 'one member still waits');
  sent[0]!.resolve('[{"jsonrpc":"2.0","id":1,"result":"a"},{"jsonrpc":"2.0","id":2,"result":"b"},{"jsonrpc":"2.0","id":3,"result":"c"}]');
  t.is(JSON.parse((await answers[2]!).body.toString()).result, 'c');

  const again = [new Cancellation(), new Cancellation()];
  const pending = [call(1), call(2)].map((c, i) => co.send(upstream, request(c, again[i]), c));
  await turn();
  again[0]!.abort();
  again[1]!.abort();
  t.true(sent[1]!.request.signal.aborted, 'every member aborted: the shared call too');
  for (const p of pending) await t.throwsAsync(p, { message: 'call aborted' });
  // aborted while queued: never sent
  const gone = new Cancellation();
  const queued = co.send(upstream, request(call(9), gone), call(9));
  gone.abort();
  await t.throwsAsync(queued, { message: 'call aborted' });
  await turn();
  t.is(sent.length, 2);
});

test('a member answer over its own size limit fails that member only; a WebSocket upstream is never batched', async (t) => {
  const { upstream, sent } = fakeUpstream();
  const co = new BatchCoalescer();
  const big = co.send(upstream, request(call(1), new Cancellation(), 50), call(1));
  const small = co.send(upstream, request(call(2), new Cancellation(), 50), call(2));
  await turn();
  sent[0]!.resolve(`[{"jsonrpc":"2.0","id":1,"result":"0x${'0'.repeat(100)}"},{"jsonrpc":"2.0","id":2,"result":"0x1"}]`);
  await t.throwsAsync(big, { message: /larger than 50 bytes/ });
  t.is((await small).body.toString(), '{"jsonrpc":"2.0","id":2,"result":"0x1"}');

  const ws = fakeUpstream('ws://127.0.0.1:3');
  void co.send(ws.upstream, request(call(1)), call(1));
  void co.send(ws.upstream, request(call(2)), call(2));
  t.is(ws.sent.length, 2, 'sent at once, one by one');
  t.deepEqual(splitAnswer(Buffer.from('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no"}}'), [{ call: call(1) }]), 'single');
});
