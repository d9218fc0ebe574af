/**
 * The bench's fake upstream (test/bench/upstream-server.ts), a real child process spoken to over
 * raw TCP: it speaks the HTTP/1.1 the bench's clients use (keep-alive, pipelining, close) and
 * refuses what it does not serve with an error and a closed connection, so that a bench run can
 * never count a misread request as an answer.
 */
import test from 'ava';
import net from 'node:net';
import { startChild, type Child } from '../../bench/children.js';

let upstream: Child<{ ports: number[] }>;
let port: number;

test.before(async () => {
  upstream = await startChild<{ ports: number[] }>('upstream', './upstream-server.ts', [JSON.stringify([{ chainId: 2, delayMs: 1 }])]);
  port = upstream.info.ports[0]!;
});
test.after.always(async () => upstream?.stop());

/** Writes `data` on a fresh connection and reads until the server closes it or `answers` complete answers came. */
async function exchange(data: string | Buffer, answers = Infinity): Promise<{ text: string; closed: boolean }> {
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  return new Promise((resolve, reject) => {
    const done = (closed: boolean) => {
      socket.destroy();
      resolve({ text, closed });
    };
    socket.on('error', reject);
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      if (complete(text) >= answers) done(false);
    });
    socket.on('end', () => done(true));
    socket.write(data);
  });
}

/** How many complete answers (head and Content-Length body) `text` holds. */
function complete(text: string): number {
  let n = 0;
  let at = 0;
  for (;;) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) return n;
    const length = Number(/content-length: (\d+)/i.exec(text.slice(at, end))?.[1] ?? 0);
    if (text.length < end + 4 + length) return n;
    at = end + 4 + length;
    n += 1;
  }
}

const post = (body: string, headers = '') =>
  `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const call = (id: unknown, method = 'eth_getBalance') => JSON.stringify({ jsonrpc: '2.0', id, method, params: ['0x0', '0x1'] });

test.serial('pipelined requests are answered in order, each with its own id, and counted by method', async (t) => {
  await upstream.call('reset');
  const { text, closed } = await exchange(post(call(1)) + post(call('two', 'eth_blockNumber')) + post(call(3)), 3);
  t.false(closed);
  const bodies = text.split('\r\n\r\n').filter((_, i) => i > 0).map((b) => b.replace(/HTTP\/1\.1[\s\S]*$/, ''));
  t.deepEqual(bodies.map((b) => (JSON.parse(b) as { id: unknown }).id), [1, 'two', 3]);
  t.regex(text, /^HTTP\/1\.1 200 OK\r\n/);
  t.regex(text, /Connection: keep-alive\r\n/);
  t.deepEqual(await upstream.call('stats'), [{ eth_getBalance: 2, eth_blockNumber: 1 }]);
});

test.serial('a request split across writes is read whole', async (t) => {
  const raw = Buffer.from(post(call(7)));
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  const got = new Promise<void>((resolve) => socket.on('data', (c: Buffer) => {
    text += c.toString('latin1');
    if (complete(text) === 1) resolve();
  }));
  for (let i = 0; i < raw.length; i += 9) {
    socket.write(raw.subarray(i, i + 9));
    await new Promise((r) => setTimeout(r, 1));
  }
  await got;
  socket.destroy();
  t.regex(text, /"id":7,"result":"0xde0b6b3a7640000"/);
});

test.serial('Connection: close and HTTP/1.0 get their answer, then the connection closes', async (t) => {
  for (const request of [post(call(1), 'Connection: close\r\n'), post(call(1)).replace('HTTP/1.1', 'HTTP/1.0')]) {
    const { text, closed } = await exchange(request + post(call(2)));
    t.true(closed);
    t.is(complete(text), 1, 'nothing after the closing request is answered');
    t.regex(text, /^HTTP\/1\.1 200 OK\r\n[\s\S]*Connection: close\r\n/);
  }
});

test.serial('what the fake does not serve gets an error status and a closed connection', async (t) => {
  const cases: [string, string | Buffer, RegExp][] = [
    ['Transfer-Encoding', `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`, /^HTTP\/1\.1 501 /],
    ['a head over 16 KiB', `POST / HTTP/1.1\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`, /^HTTP\/1\.1 431 /],
    ['a malformed request line', 'HELLO\r\n\r\n', /^HTTP\/1\.1 400 /],
    ['a bad Content-Length', 'POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n', /^HTTP\/1\.1 400 /],
  ];
  for (const [what, request, status] of cases) {
    const { text, closed } = await exchange(request);
    t.regex(text, status, what);
    t.true(closed, `${what}: the connection closes`);
  }
});

test.serial('a GET or a body that is not JSON gets an error answer, and the connection stays usable', async (t) => {
  const { text, closed } = await exchange('GET / HTTP/1.1\r\nHost: x\r\n\r\n' + post('{not json') + post(call(9)), 3);
  t.false(closed);
  const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
  t.deepEqual(statuses, ['405', '400', '200']);
  t.regex(text, /"id":9,/);
});
