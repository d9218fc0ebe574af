/**
 * The bench's closed-loop runs (test/bench/load.ts runLoad) against a real HTTP server that holds
 * its answers: in smoke mode (`untilAnswer`) a run with no answer by its end goes on until its
 * first, says so once, and counts its rate over the time it took; in a full run (no `untilAnswer`)
 * no answer stays no answer.
 */
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runLoad } from '../../bench/load.js';

/** A server that holds every request until `release()`, then answers them all (and any later one) at once. */
async function holdingServer(t: ExecutionContext) {
  const held: http.ServerResponse[] = [];
  let released = false;
  let requests = 0;
  const answer = (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
  const server = http.createServer((req, res) => {
    requests += 1;
    req.resume();
    req.on('end', () => (released ? answer(res) : held.push(res)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    /** Requests received so far. */
    requests: () => requests,
    release() {
      released = true;
      for (const res of held.splice(0)) answer(res);
    },
  };
}

const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });

test('smoke mode: a run with no answer by its end goes on until its first answer', async (t) => {
  const server = await holdingServer(t);
  const told: number[] = [];
  const result = await runLoad({
    url: server.url, body, connections: 2, seconds: 0.1, warmupSeconds: 0,
    // Called once the run's tenth of a second has passed with nothing answered: the answers come now.
    untilAnswer: (seconds) => {
      told.push(seconds);
      server.release();
    },
  });
  t.deepEqual(told, [0.1]);
  t.true(result.ok >= 1, `${result.ok} answers`);
  t.is(result.errors, 0);
  t.is(result.non2xx, 0);
  // Its rate is over the time it took (past its end: the first answer came after the call above).
  t.true(result.seconds > 0.1, `${result.seconds} s`);
  t.is(result.rps, result.ok / result.seconds);
  t.true(server.requests() >= result.ok);
});

test('a full run (no untilAnswer) with no answer by its end ends then, with none', async (t) => {
  const server = await holdingServer(t);
  const result = await runLoad({ url: server.url, body, connections: 2, seconds: 0.1, warmupSeconds: 0 });
  t.is(result.ok, 0);
  t.is(result.errors, 0);
  t.is(result.seconds, 0.1);
});
