/** The indexer's response writers on the wire: status, headers, Content-Length in bytes, the body. */
import test from 'ava';
import { sendJson, sendText } from '../../../../../lib/indexer/http/write.js';
import { send } from '../../../../support/gateway.js';
import { serveHandler } from '../../../../support/stage.js';

async function reply(handler: Parameters<typeof serveHandler>[0]) {
  const server = await serveHandler(handler);
  try {
    return await send(server.url, 'GET', '/');
  } finally {
    await server.close();
  }
}

test('sendJson should write the status, the extra headers, UTF-8 JSON and its length in bytes', async (t) => {
  const r = await reply((_req, res) => sendJson(res, 201, { name: 'Zoë', n: 1 }, { 'Cache-Control': 'no-cache' }));
  t.is(r.status, 201);
  t.is(r.headers['content-type'], 'application/json; charset=utf-8');
  t.is(r.headers['cache-control'], 'no-cache');
  t.is(r.headers['content-length'], String(Buffer.byteLength('{"name":"Zoë","n":1}')));
  t.deepEqual(r.body, { name: 'Zoë', n: 1 });
});

test('sendText should write a string or bytes with the given type and its length in bytes', async (t) => {
  const text = await reply((_req, res) => sendText(res, 200, 'text/html; charset=utf-8', '<p>é</p>', { 'X-Extra': '1' }));
  t.is(text.text, '<p>é</p>');
  t.is(text.headers['content-length'], '9');
  t.is(text.headers['content-type'], 'text/html; charset=utf-8');
  t.is(text.headers['x-extra'], '1');
  const bytes = await reply((_req, res) => sendText(res, 503, 'application/octet-stream', Buffer.from([1, 2, 3])));
  t.is(bytes.status, 503);
  t.is(bytes.headers['content-length'], '3');
});
