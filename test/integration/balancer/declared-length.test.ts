/**
 * An answer whose declared length lies. node:http ends a 204 at its head whatever its
 * Content-Length says (a 304 is an HTTP status failure before that), so the buffer the transport allocated for the declared length (without
 * zeroing it) was taken as the answer: memory of the gateway (other chains' answers, request
 * headers) judged as an upstream's answer, quoted in the failure's reason to the client, and a
 * vote whenever that memory read as an answer. It is the upstream's failure, named as undici
 * names a body shorter than its Content-Length, on both clients.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

/** An HTTP/1.1 server writing `head` (and no body) for every request it reads whole. */
async function headOnly(head: string): Promise<{ url: string; calls: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const state = { url: '', calls: 0, close: async () => {} };
  const server = net.createServer((s) => {
    sockets.add(s);
    let buf = '';
    s.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        buf = buf.slice(end + 4 + length);
        state.calls += 1;
        s.write(head);
      }
    });
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return state;
}

const size = 100_000;
const marker = 'ANOTHER-CHAINS-ANSWER';
/** An answer of `size` bytes that is not this test's question's (a marker, then padding). */
const otherAnswer = (id: unknown) => {
  const start = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":"${marker}`;
  return `${start}${'x'.repeat(size - start.length - 2)}"}`;
};
const question = rpc('eth_getBalance', ['0x2222222222222222222222222222222222222222', '0x10']);
const other = rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x10']);
const mismatch = "invalid HTTP response: the body's length is not its Content-Length";

for (const client of ['node', 'undici'] as const) {
  {
    const status = '204 No Content';
    test(`${client}: a ${status} declaring ${size} bytes is the upstream's failure, not the memory of the buffer allocated for them`, async (t) => {
      const liar = await headOnly(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
      const elsewhere = await startFakeUpstream({ raw: (c) => otherAnswer(c.id) });
      const gw = await startGateway({ upstreams: { client }, chains: { 1: { rpcs: [elsewhere.url] }, 2: { rpcs: [liar.url] } } });
      t.teardown(async () => {
        await gw.close();
        await Promise.all([liar.close(), elsewhere.close()]);
      });
      // Answers of that size read for another chain first: the memory a fresh allocation may reuse.
      for (let round = 0; round < 5; round++) {
        const others = await Promise.all([1, 2, 3, 4].map(() => gw.post('/rpc/1', other)));
        for (const r of others) t.is(r.status, 200, r.text.slice(0, 200));
        const r = await gw.post('/rpc/2', question);
        t.is(r.status, 502, r.text.slice(0, 300));
        t.is(r.body.error.code, -32011);
        t.false(r.text.includes(marker), 'no byte of another answer in this one');
        const failures = r.body.error.data.failures as { reason: string }[];
        t.is(failures.length, 1);
        t.true(failures[0]!.reason.startsWith(mismatch), failures[0]!.reason.slice(0, 300));
      }
      t.is(liar.calls, 5);
    });
  }
}

test('node: a confirmable read with a lying 204 among its upstreams is confirmed by the other two', async (t) => {
  const liar = await headOnly(`HTTP/1.1 204 No Content\r\nContent-Length: ${size}\r\n\r\n`);
  const honest = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  const gw = await startGateway({ upstreams: { client: 'node' }, chains: { 1: { rpcs: [liar.url, ...honest.map((f) => f.url)], confirmations: 2 } } });
  t.teardown(async () => {
    await gw.close();
    await Promise.all([liar.close(), ...honest.map((f) => f.close())]);
  });
  const r = await gw.post('/rpc/1', question);
  t.is(r.status, 200, r.text.slice(0, 300));
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(String(r.headers['x-checked-urls']).split(',').sort(), honest.map((f) => f.url).sort());
  t.is(liar.calls, 1);
});
