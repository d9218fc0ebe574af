/**
 * The calls in flight on a WebSocket upstream, driven directly with message buffers: our own ids
 * out, the client's ids spliced back byte for byte, an answer matched by its first known id, a
 * late answer ignored, a stranger's id failing every call of the connection.
 */
import test from 'ava';
import type WebSocket from 'ws';
import type { RpcId } from '../../../../../lib/jsonrpc/types.js';
import { ByteBudget } from '../../../../../lib/upstream/budget.js';
import type { UpstreamResponse } from '../../../../../lib/upstream/transport/contract.js';
import { WsCalls } from '../../../../../lib/upstream/transport/ws-calls.js';

const socketA = {} as WebSocket;
const socketB = {} as WebSocket;

/** Adds a call for these client ids; resolves with its body text or its error message. */
function call(calls: WsCalls, clientIds: RpcId[], options: { ws?: WebSocket; maxDepth?: number; budget?: ReturnType<ByteBudget['open']> } = {}) {
  const ids = calls.idsFor(clientIds.map((id) => ({ id })));
  let settled: { body?: string; error?: string } | undefined;
  calls.add({
    ws: options.ws ?? socketA,
    ids,
    maxDepth: options.maxDepth ?? 256,
    budget: options.budget,
    resolve: (r: UpstreamResponse) => (settled = { body: r.body.toString() }),
    reject: (e: Error) => (settled = { error: e.message }),
  });
  return { ids: [...ids.keys()], result: () => settled };
}

test('should give each call ids of its own, 1, 2, 3… across requests', (t) => {
  const calls = new WsCalls();
  t.deepEqual([...calls.idsFor([{ id: 'a' }, { id: 7 }]).entries()], [[1, 'a'], [2, 7]]);
  t.deepEqual([...calls.idsFor([{ id: 'a' }]).entries()], [[3, 'a']], 'a client id seen before gets a new one');
});

test('should splice the client\'s id back into the answer and keep every other byte', (t) => {
  const calls = new WsCalls();
  const c = call(calls, ['client-1']);
  calls.onMessage(Buffer.from(`{"jsonrpc":"2.0", "id":${c.ids[0]},"result":{"big":12345678901234567890,"f":1.0}}`));
  t.deepEqual(c.result(), { body: '{"jsonrpc":"2.0", "id":"client-1","result":{"big":12345678901234567890,"f":1.0}}' });
});

test('should match a batch answer by its ids, in whatever order they come', (t) => {
  const calls = new WsCalls();
  const c = call(calls, [10, 'x']);
  const [a, b] = c.ids;
  calls.onMessage(Buffer.from(`[{"jsonrpc":"2.0","id":${b},"result":"0x2"},{"jsonrpc":"2.0","id":${a},"result":"0x1"}]`));
  t.deepEqual(c.result(), { body: '[{"jsonrpc":"2.0","id":"x","result":"0x2"},{"jsonrpc":"2.0","id":10,"result":"0x1"}]' });
});

test('should route each answer to its own call when several are in flight', (t) => {
  const calls = new WsCalls();
  const first = call(calls, [1]);
  const second = call(calls, [1]);
  calls.onMessage(Buffer.from(`{"jsonrpc":"2.0","id":${second.ids[0]},"result":"second"}`));
  t.is(first.result(), undefined);
  t.deepEqual(second.result(), { body: '{"jsonrpc":"2.0","id":1,"result":"second"}' });
  calls.onMessage(Buffer.from(`{"jsonrpc":"2.0","id":${first.ids[0]},"result":"first"}`));
  t.deepEqual(first.result(), { body: '{"jsonrpc":"2.0","id":1,"result":"first"}' });
});

test('should accept a message given as an ArrayBuffer or as fragments', (t) => {
  const calls = new WsCalls();
  const c = call(calls, ['f']);
  const text = `{"jsonrpc":"2.0","id":${c.ids[0]},"result":true}`;
  calls.onMessage([Buffer.from(text.slice(0, 10)), Buffer.from(text.slice(10))]);
  t.deepEqual(c.result(), { body: '{"jsonrpc":"2.0","id":"f","result":true}' });
  const d = call(calls, ['g']);
  const bytes = Buffer.from(`{"jsonrpc":"2.0","id":${d.ids[0]},"result":false}`);
  calls.onMessage(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer);
  t.deepEqual(d.result(), { body: '{"jsonrpc":"2.0","id":"g","result":false}' });
});

test('should ignore a notification and a late answer to a call given up on', (t) => {
  const calls = new WsCalls();
  const gone = call(calls, ['a']);
  calls.remove(new Map([[gone.ids[0]!, 'a']]));
  const live = call(calls, ['b']);
  calls.onMessage(Buffer.from('{"jsonrpc":"2.0","method":"eth_subscription","params":{}}'));
  calls.onMessage(Buffer.from(`{"jsonrpc":"2.0","id":${gone.ids[0]},"result":"late"}`));
  t.is(gone.result(), undefined);
  t.is(live.result(), undefined, 'still waiting for its own answer');
});

test('should drop a message unread while no call is in flight (a flood nobody asked for costs no scan)', (t) => {
  const calls = new WsCalls();
  // A message in fragments whose list throws when read: reading the message (joining, scanning)
  // would throw here. (A list, not its fragments: newer Node checks each fragment's type before
  // it reads its length, so an object posing as a Buffer would fail that check instead.)
  const fragments = (n: number) =>
    new Proxy(Array.from({ length: n }, () => Buffer.from('{}')), {
      get(target, key, receiver) {
        if (key === 'length' || (typeof key === 'string' && /^\d+$/.test(key))) throw new Error('the message was read');
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
  t.notThrows(() => calls.onMessage(fragments(2)));
  const done = call(calls, ['a']);
  calls.onMessage(Buffer.from(`{"jsonrpc":"2.0","id":${done.ids[0]},"result":"0x1"}`));
  t.deepEqual(done.result(), { body: '{"jsonrpc":"2.0","id":"a","result":"0x1"}' });
  t.notThrows(() => calls.onMessage(fragments(1)), 'idle again once its call was answered');
  const live = call(calls, ['b']);
  t.throws(() => calls.onMessage(fragments(2)), { message: 'the message was read' }, 'with a call in flight a message is read');
  t.is(live.result(), undefined);
});

test('should fail every call in flight on an id it never sent, or an error with id null', (t) => {
  for (const [message, reason] of [
    ['{"jsonrpc":"2.0","id":"strange","result":1}', /matches no call in flight/],
    ['{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad request"}}', /upstream error with id null: bad request/],
    ['{"jsonrpc":"2.0","id":999999,"result":1}', /matches no call in flight/],
    ['not json at all', /not a JSON-RPC answer \(not JSON\)/],
    ['[1,2]', /a JSON array without an id/],
  ] as const) {
    const calls = new WsCalls();
    const a = call(calls, [1]);
    const b = call(calls, [2]);
    calls.onMessage(Buffer.from(message));
    t.regex(a.result()?.error ?? '', reason, message);
    t.regex(b.result()?.error ?? '', reason, message);
  }
});

test('should fail a call whose answer names an id of another call, or names one twice', (t) => {
  const calls = new WsCalls();
  const a = call(calls, [1]);
  const other = call(calls, [2]);
  calls.onMessage(Buffer.from(`[{"id":${a.ids[0]},"result":1},{"id":${other.ids[0]},"result":2}]`));
  t.regex(a.result()?.error ?? '', /which was not asked/);
  const b = call(calls, [3]);
  calls.onMessage(Buffer.from(`{"id":${b.ids[0]},"id":${b.ids[0]},"result":1}`));
  t.is(b.result()?.error, 'an answer object with "id" twice');
});

test('should fail an answer nested deeper than the call accepts', (t) => {
  const calls = new WsCalls();
  const c = call(calls, [1], { maxDepth: 3 });
  calls.onMessage(Buffer.from(`{"id":${c.ids[0]},"result":[[[[1]]]]}`));
  t.regex(c.result()?.error ?? '', /nested deeper than 3 levels/);
});

test('should charge the answer to the call\'s budget, and fail it when the budget has no room', (t) => {
  const budget = new ByteBudget(60);
  const calls = new WsCalls();
  const account = budget.open();
  const c = call(calls, [1], { budget: account });
  const message = Buffer.from(`{"jsonrpc":"2.0","id":${c.ids[0]},"result":"0x1"}`);
  calls.onMessage(message);
  t.truthy(c.result()?.body);
  t.is(account.held, message.length);
  const d = call(calls, [1], { budget: budget.open() });
  calls.onMessage(Buffer.from(`{"jsonrpc":"2.0","id":${d.ids[0]},"result":"0x1"}`));
  t.regex(d.result()?.error ?? '', /upstream byte budget exhausted/);
});

test('failAll should fail only the calls written on the given connection', (t) => {
  const calls = new WsCalls();
  const onA = call(calls, [1], { ws: socketA });
  const onB = call(calls, [2], { ws: socketB });
  calls.failAll(new Error('connection closed'), socketA);
  t.deepEqual(onA.result(), { error: 'connection closed' });
  t.is(onB.result(), undefined);
  calls.failAll(new Error('closing'));
  t.deepEqual(onB.result(), { error: 'closing' });
});
