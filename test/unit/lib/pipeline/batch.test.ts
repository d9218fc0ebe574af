/**
 * A batch answered per member: the members' contexts, and the one answer array with what its
 * headers say (confirmable only when every element is, the smallest N, the unions of upstreams,
 * the hash of the elements' hashes).
 */
import test from 'ava';
import { asGatewayError, errorText, InvalidParamsError, InvalidRequestError } from '../../../../lib/errors.js';
import { silentLogger } from '../../../../lib/log.js';
import { batchAnswer, memberContext, memberPayload } from '../../../../lib/pipeline/batch.js';
import type { MemberResult, RpcContext } from '../../../../lib/pipeline/context.js';
import type { Upstream } from '../../../../lib/upstream/registry.js';
import { sha256Hex } from '../../../../lib/verify/answers/canonical.js';
import { single, testChain, testUpstream } from '../../../support/stage.js';

const [u0, u1, u2] = [testUpstream(0), testUpstream(1), testUpstream(2)];
const shown = (u: { label: string }) => u.label.slice(7, 9);
const toGateway = (e: Error) => asGatewayError(e, silentLogger);

function answer(id: number, members: Upstream[], fields: Partial<RpcContext> = {}): MemberResult {
  const hash = `h${id}`;
  return {
    kind: 'answer',
    ctx: {
      requestId: 'r',
      log: silentLogger,
      payload: single('eth_getBalance', ['0x1', '0x10'], id),
      confirmable: true,
      required: members.length,
      verdict: { hash, members: members.map((upstream) => ({ upstream, ok: true, body: Buffer.from(`{"jsonrpc":"2.0","id":${id},"result":"0x${id}"}`), hash, ms: 1 })) },
      ...fields,
    },
  };
}

test('memberPayload should make a single call with the member\'s own bytes', (t) => {
  const raw = Buffer.from('{"jsonrpc":"2.0","id":"a","method":"eth_chainId"}');
  t.deepEqual(memberPayload({ id: 'a', method: 'eth_chainId', params: [] }, raw), { calls: [{ id: 'a', method: 'eth_chainId', params: [] }], batch: false, raw });
});

test('memberContext should carry the batch\'s request id, chain, route and Via, and nothing a stage wrote', (t) => {
  const chain = testChain([u0]);
  const batch: RpcContext = { requestId: 'r9', log: silentLogger, chain, confirmationsOverride: 3, via: '1.1 omnigate-x', required: 3, confirmable: true };
  const payload = single('eth_chainId');
  const ctx = memberContext(batch, 2, payload);
  t.is(ctx.requestId, 'r9');
  t.is(ctx.chain, chain);
  t.is(ctx.confirmationsOverride, 3);
  t.is(ctx.via, '1.1 omnigate-x');
  t.is(ctx.payload, payload);
  t.is(ctx.required, undefined);
  t.is(ctx.confirmable, undefined);
  const bare = memberContext({ requestId: 'r', log: silentLogger }, 0, payload);
  t.is(bare.via, undefined, 'absent fields stay unset');
  t.deepEqual(Object.keys(bare), Object.keys(ctx), 'every member context has the one shape of a request context');
});

test('should write the elements in member order, leave notifications out, and say confirmed at N when every member is', (t) => {
  const a = batchAnswer([answer(1, [u0, u1]), { kind: 'notification' }, answer(2, [u2, u0])], errorText, toGateway, shown);
  t.deepEqual(JSON.parse(a.body!.toString()), [{ jsonrpc: '2.0', id: 1, result: '0x1' }, { jsonrpc: '2.0', id: 2, result: '0x2' }]);
  t.true(a.confirmable);
  t.is(a.required, 2);
  t.deepEqual(a.checked, ['u0', 'u1', 'u2']);
  t.deepEqual(a.forwarded, ['u0', 'u2']);
  t.is(a.hash, sha256Hex('h1,h2'));
});

test('should give the smallest N of confirmed members', (t) => {
  const a = batchAnswer([answer(1, [u0, u1, u2]), answer(2, [u1, u2])], errorText, toGateway, shown);
  t.true(a.confirmable);
  t.is(a.required, 2);
});

test('should say unconfirmed and N 1 when one member is unconfirmable, relayed unconfirmed, or short of its N', (t) => {
  const relayed = answer(2, [u1, u2]);
  if (relayed.kind === 'answer') relayed.ctx.verdict!.unconfirmed = true;
  const cases: MemberResult[] = [answer(2, [u1], { confirmable: false, required: 1 }), relayed, answer(2, [u1], { required: 2 })];
  for (const other of cases) {
    const a = batchAnswer([answer(1, [u0, u1]), other], errorText, toGateway, shown);
    t.false(a.confirmable);
    t.is(a.required, 1);
  }
});

test('should write a refused member\'s error with its own id as the client wrote it', (t) => {
  const raw = Buffer.from('{"jsonrpc":"2.0","id":"0x01","method":"eth_call"}');
  const a = batchAnswer([answer(1, [u0]), { kind: 'error', error: new InvalidParamsError('bad'), raw }], errorText, toGateway, shown);
  const error = '{"jsonrpc":"2.0","id":"0x01","error":{"code":-32602,"message":"bad"}}';
  t.is(a.body!.toString(), `[{"jsonrpc":"2.0","id":1,"result":"0x1"},${error}]`);
  t.false(a.confirmable);
  t.is(a.hash, sha256Hex(`h1,${sha256Hex(error)}`));
  t.deepEqual(a.checked, ['u0'], 'a refusal names no upstream');
});

test('should write null as the id of a member refused before its id could be read', (t) => {
  const a = batchAnswer([{ kind: 'error', error: new InvalidRequestError('not a request', { id: null }), raw: Buffer.from('5') }], errorText, toGateway, shown);
  t.deepEqual(JSON.parse(a.body!.toString()), [{ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'not a request' } }]);
});

test('should name the upstreams a write member went to', (t) => {
  const a = batchAnswer([answer(1, [u0], { writtenTo: [u1, u2], confirmable: false, required: 1 })], errorText, toGateway, shown);
  t.deepEqual(a.checked, ['u1', 'u2']);
  t.deepEqual(a.forwarded, ['u0']);
});

test('should have no body for notifications only', (t) => {
  t.deepEqual(batchAnswer([{ kind: 'notification' }], errorText, toGateway, shown), { body: undefined, confirmable: false, required: 1, checked: [], forwarded: [], hash: sha256Hex('') });
});

test('should refuse an answered member without a verdict', (t) => {
  t.throws(() => batchAnswer([{ kind: 'answer', ctx: { requestId: 'r', log: silentLogger } }], errorText, toGateway, shown), { message: /no verdict/ });
});
