import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import connect from 'connect';
import express from 'express';
import { asyncStage } from '../../../lib/async-middleware.js';
import type { Middleware } from '../../../lib/compose.js';

const req = {} as IncomingMessage;
const res = {} as ServerResponse;
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

test('should call next() once with no error when the stage resolves', async (t) => {
  const calls: unknown[][] = [];
  asyncStage(async () => {})(req, res, (...args: unknown[]) => calls.push(args));
  await settle();
  t.deepEqual(calls, [[undefined]]);
});

test('should call next(err) once when the stage rejects', async (t) => {
  const err = new Error('nope');
  const calls: unknown[][] = [];
  asyncStage(async () => {
    throw err;
  })(req, res, (...args: unknown[]) => calls.push(args));
  await settle();
  t.deepEqual(calls, [[err]]);
});

test('should pass a non-Error rejection through as is', async (t) => {
  const calls: unknown[][] = [];
  asyncStage(() => Promise.reject('text'))(req, res, (...args: unknown[]) => calls.push(args));
  await settle();
  t.deepEqual(calls, [['text']]);
});

test('should not call next before the stage settles', async (t) => {
  let release!: () => void;
  const calls: unknown[][] = [];
  asyncStage(() => new Promise<void>((resolve) => (release = resolve)))(req, res, (...args: unknown[]) => calls.push(args));
  await settle();
  t.deepEqual(calls, []);
  release();
  await settle();
  t.deepEqual(calls, [[undefined]]);
});

test('should give the stage the request and the response', async (t) => {
  let got: unknown[] = [];
  asyncStage(async (q, s) => {
    got = [q, s];
  })(req, res, () => {});
  await settle();
  t.deepEqual(got, [req, res]);
});

test('should keep the stage name for traces and take three arguments', (t) => {
  const mw = asyncStage(async function selectUpstreams() {});
  t.is(mw.name, 'selectUpstreams');
  t.is(mw.length, 3);
});

// STYLE rule 4: connect ignores returned promises, express 5 forwards them; both must see the
// rejection as next(err) and reach their error handler exactly once.
type ErrorHandler = (err: Error & { status: number }, req: IncomingMessage, res: ServerResponse, next: () => void) => void;
interface Host {
  use(fn: Middleware | ErrorHandler): unknown;
}
const hosts: Record<string, () => Host & ((req: IncomingMessage, res: ServerResponse) => void)> = {
  connect: () => connect() as never,
  express: () => express() as never,
};
for (const [name, make] of Object.entries(hosts)) {
  test(`should reach the ${name} error handler once when an async stage rejects`, async (t) => {
    const app = make();
    let handled = 0;
    app.use(
      asyncStage(async function failing() {
        await new Promise((resolve) => setImmediate(resolve));
        throw Object.assign(new Error('teapot'), { status: 418 });
      }),
    );
    app.use((err: Error & { status: number }, _q: IncomingMessage, s: ServerResponse, _n: () => void) => {
      handled += 1;
      s.statusCode = err.status;
      s.end(err.message);
    });
    const server = createServer(app);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      t.is(response.status, 418);
      t.is(await response.text(), 'teapot');
      t.is(handled, 1);
    } finally {
      server.close();
      server.closeAllConnections();
    }
  });
}
