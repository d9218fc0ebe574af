import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { InternalError, InvalidParamsError, InvalidRequestError, MethodNotAllowedError, MethodNotFoundError, NoQuorumError } from '../../../lib/errors.js';
import { rpcErrorHandler } from '../../../middleware/error-handler.js';

test('should declare exactly four parameters, so connect and express see an error handler', (t) => {
  t.is(rpcErrorHandler().length, 4);
  t.is(rpcErrorHandler({}).length, 4);
});

test('should be named for traces', (t) => {
  t.is(rpcErrorHandler().name, 'rpcErrorHandler');
});

/** Sends `err` through the handler on a real server; resolves with the response and whether next was called. */
async function render(err: unknown, before?: (res: ServerResponse) => void) {
  const nextCalls: unknown[] = [];
  const handler = rpcErrorHandler();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    before?.(res);
    handler(err, req, res, (e) => {
      nextCalls.push(e);
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc/1`, { method: 'POST', body: '{}' });
    return { response, text: await response.text(), nextCalls };
  } finally {
    server.close();
    server.closeAllConnections();
  }
}

test('should write a JSON-RPC error envelope with the error\'s status and the client\'s id', async (t) => {
  const { response, text } = await render(new InvalidRequestError('Invalid request: bad', { id: 7, data: { hint: 'x' } }));
  t.is(response.status, 400);
  t.is(response.headers.get('content-type'), 'application/json');
  t.truthy(response.headers.get('x-request-id'));
  t.deepEqual(JSON.parse(text), { jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'Invalid request: bad', data: { hint: 'x' } } });
});

test('should answer the errors a node sends itself (-32602, -32601) with HTTP 200, not confirmed (spec B5)', async (t) => {
  for (const err of [new InvalidParamsError('Invalid params: bad', { id: 'p' }), new MethodNotFoundError('not served', { id: 'p' })]) {
    const { response, text } = await render(err);
    t.is(response.status, 200, err.name);
    t.is(response.headers.get('content-type'), 'application/json');
    t.is(response.headers.get('x-confirmable'), 'false');
    t.is(response.headers.get('x-required-confirmations'), '1');
    t.deepEqual(JSON.parse(text), { jsonrpc: '2.0', id: 'p', error: { code: err.rpcCode, message: err.message } });
  }
});

test('should answer id null when the id is unknown', async (t) => {
  const { text } = await render(new NoQuorumError('no quorum'));
  t.deepEqual(JSON.parse(text), { jsonrpc: '2.0', id: null, error: { code: -32010, message: 'no quorum' } });
});

test('should copy the error\'s headers', async (t) => {
  const { response } = await render(new MethodNotAllowedError('use POST', { headers: { Allow: 'POST' } }));
  t.is(response.status, 405);
  t.is(response.headers.get('allow'), 'POST');
});

test('should answer a foreign error as -32603 without its message', async (t) => {
  const { response, text } = await render(new Error('secret https://a.example/v2/KEY'));
  t.is(response.status, 500);
  t.deepEqual(JSON.parse(text), { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } });
});

test('should hand the error on when the headers are already sent', async (t) => {
  const err = new InternalError('late');
  const { nextCalls } = await render(err, (res) => {
    res.writeHead(200);
    res.write('partial');
  });
  t.deepEqual(nextCalls, [err]);
});
