/**
 * Stage 7, emit headers, on the wire (node:http on port 0): the agreeing group's first bytes and
 * the seven headers of a single call, redacted or not, CORS only for a browser's request, and a
 * batch's one array with the headers that hold for every member.
 */
import type { IncomingMessage } from 'node:http';
import test from 'ava';
import { InvalidParamsError } from '../../../lib/errors.js';
import { silentLogger } from '../../../lib/log.js';
import { initContext, type RpcContext } from '../../../lib/pipeline/context.js';
import type { Upstream } from '../../../lib/upstream/registry.js';
import { sha256Hex } from '../../../lib/verify/answers/canonical.js';
import type { Good } from '../../../lib/verify/question.js';
import { emitHeaders, type EmitHeadersOptions } from '../../../middleware/emit-headers.js';
import { send } from '../../support/gateway.js';
import { serveHandler, single, stageRequest, testUpstream } from '../../support/stage.js';

const [u0, u1, u2] = [testUpstream(0), testUpstream(1), testUpstream(2)];
const good = (upstream: Upstream, body: string, hash = 'h'): Good => ({ upstream, ok: true, body: Buffer.from(body), hash, ms: 1 });

/** Serves one request whose context holds `fields` (fresh per request), through emitHeaders. */
async function emit(fields: () => Partial<RpcContext>, options: EmitHeadersOptions = { redactHeaders: true }, headers: Record<string, string> = {}) {
  const errors: unknown[] = [];
  const server = await serveHandler((req: IncomingMessage, res) => {
    Object.assign(initContext(req, 'req-7', silentLogger), fields());
    emitHeaders(options)(req, res, (err) => {
      errors.push(err);
      res.writeHead(599).end();
    });
  });
  try {
    const reply = await send(server.url, 'POST', '/rpc/1', '{}', headers);
    return { reply, errors };
  } finally {
    await server.close();
  }
}

const answered = (): Partial<RpcContext> => ({
  payload: single('eth_getBalance', ['0x1', '0x10']),
  confirmable: true,
  required: 2,
  verdict: { hash: 'ab'.repeat(32), members: [good(u1, '{"jsonrpc":"2.0","id":1,"result":"0x05"}'), good(u0, '{"id":1,"jsonrpc":"2.0","result":"0x5"}')] },
});

test('should send the first agreeing upstream\'s bytes with the seven headers', async (t) => {
  const { reply, errors } = await emit(answered);
  t.deepEqual(errors, []);
  t.is(reply.status, 200);
  t.is(reply.text, '{"jsonrpc":"2.0","id":1,"result":"0x05"}');
  t.is(reply.headers['content-type'], 'application/json');
  t.is(reply.headers['content-length'], String(reply.text.length));
  t.is(reply.headers['x-checked-urls'], 'http://u1.test/***,http://u0.test/***');
  t.is(reply.headers['x-forwarded-from'], 'http://u1.test/***');
  t.is(reply.headers['x-confirmable'], 'true');
  t.is(reply.headers['x-required-confirmations'], '2');
  t.is(reply.headers['x-json-hash'], 'ab'.repeat(32));
  t.is(reply.headers['x-request-id'], 'req-7');
  t.is(reply.headers['access-control-allow-origin'], undefined, 'no CORS headers without an Origin');
});

test('should show the raw URLs only with redactHeaders false', async (t) => {
  const { reply } = await emit(answered, { redactHeaders: false });
  t.is(reply.headers['x-checked-urls'], 'http://u1.test/KEY1,http://u0.test/KEY0');
  t.is(reply.headers['x-forwarded-from'], 'http://u1.test/KEY1');
});

test('should add the CORS headers for a request with an Origin', async (t) => {
  const { reply } = await emit(answered, { redactHeaders: true }, { origin: 'https://app.test' });
  t.is(reply.headers['access-control-allow-origin'], '*');
  t.regex(String(reply.headers['access-control-expose-headers']), /X-Json-Hash/);
  t.is(reply.headers['x-confirmable'], 'true');
});

test('should say X-Confirmable false and N 1 for an unconfirmable request or a relayed refusal', async (t) => {
  const plain = await emit(() => ({ ...answered(), confirmable: false, required: 1 }));
  t.is(plain.reply.headers['x-confirmable'], 'false');
  t.is(plain.reply.headers['x-required-confirmations'], '1');
  const relayed = await emit(() => {
    const ctx = answered();
    return { ...ctx, verdict: { ...ctx.verdict!, unconfirmed: true } };
  });
  t.is(relayed.reply.headers['x-confirmable'], 'false');
  t.is(relayed.reply.headers['x-required-confirmations'], '1');
});

test('should name the upstreams a write went to in X-Checked-URLS', async (t) => {
  const { reply } = await emit(() => ({ ...answered(), confirmable: false, required: 1, writtenTo: [u0, u1, u2] }));
  t.is(reply.headers['x-checked-urls'], 'http://u0.test/***,http://u1.test/***,http://u2.test/***');
  t.is(reply.headers['x-forwarded-from'], 'http://u1.test/***');
});

test('should write a batch as one array in member order, notifications left out, confirmable only if every member is', async (t) => {
  const member = (upstream: Upstream, id: number, hash: string): RpcContext => ({
    requestId: 'req-7',
    log: silentLogger,
    payload: single('eth_getBalance', ['0x1', '0x10'], id),
    confirmable: true,
    required: 2,
    verdict: { hash, members: [good(upstream, `{"jsonrpc":"2.0","id":${id},"result":"0x${id}"}`, hash), good(u2, '{}', hash)] },
  });
  const confirmed = await emit(() => ({ members: [{ kind: 'answer', ctx: member(u0, 1, 'h1') }, { kind: 'notification' }, { kind: 'answer', ctx: member(u1, 2, 'h2') }] }));
  t.is(confirmed.reply.status, 200);
  t.deepEqual(confirmed.reply.body, [{ jsonrpc: '2.0', id: 1, result: '0x1' }, { jsonrpc: '2.0', id: 2, result: '0x2' }]);
  t.is(confirmed.reply.headers['x-confirmable'], 'true');
  t.is(confirmed.reply.headers['x-required-confirmations'], '2');
  t.is(confirmed.reply.headers['x-checked-urls'], 'http://u0.test/***,http://u2.test/***,http://u1.test/***');
  t.is(confirmed.reply.headers['x-forwarded-from'], 'http://u0.test/***,http://u1.test/***');
  t.is(confirmed.reply.headers['x-json-hash'], sha256Hex('h1,h2'));

  const refused = await emit(() => ({
    members: [
      { kind: 'answer', ctx: member(u0, 1, 'h1') },
      { kind: 'error', error: new InvalidParamsError('bad params'), raw: Buffer.from('{"jsonrpc":"2.0","id":"x","method":"eth_call","params":[]}') },
    ],
  }));
  t.deepEqual(refused.reply.body, [{ jsonrpc: '2.0', id: 1, result: '0x1' }, { jsonrpc: '2.0', id: 'x', error: { code: -32602, message: 'bad params' } }]);
  t.is(refused.reply.headers['x-confirmable'], 'false');
  t.is(refused.reply.headers['x-required-confirmations'], '1');
});

test('should answer a batch of notifications only with 204 and no body', async (t) => {
  const { reply } = await emit(() => ({ members: [{ kind: 'notification' }, { kind: 'notification' }] }));
  t.is(reply.status, 204);
  t.is(reply.text, '');
  t.is(reply.headers['x-request-id'], 'req-7');
  t.is(reply.headers['x-json-hash'], undefined);
});

test('should throw an InternalError when run before verify wrote the verdict', (t) => {
  const { req, res } = stageRequest({ payload: single('eth_blockNumber'), confirmable: false, required: 1 });
  t.throws(() => emitHeaders({ redactHeaders: true })(req, res, () => {}), { message: /emitHeaders needs ctx\.verdict/ });
});
