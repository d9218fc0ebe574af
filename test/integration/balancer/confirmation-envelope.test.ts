/**
 * What a confirmation vouches for, in the bytes around the compared value: an answer is compared
 * on its canonical form (`{"result":R}` or `{"error":{code,data,…}}`), but the client gets the
 * raw bytes of the first agreeing upstream. So those bytes must not say anything the canonical
 * form did not see: a key that only differs in letter case from a compared one (Go's
 * encoding/json and .NET's Newtonsoft match keys case-insensitively, the last one winning), a
 * `result` beside the `error` that voted, or bytes that are not UTF-8 (read as U+FFFD here, as
 * something else by another decoder). Such an answer is that upstream's failure, not a vote.
 * Real fake upstreams on port 0; the lying one answers first, so that its bytes would be the ones
 * forwarded.
 */
import test from 'ava';
import { startFakeUpstream, type FakeOptions, type FakeUpstream, type RpcCallIn } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';

async function setup(t: { teardown(fn: () => Promise<unknown>): void }, options: FakeOptions[], confirmations: number) {
  const fakes: FakeUpstream[] = [];
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  for (const o of options) fakes.push(await startFakeUpstream(o));
  const gw: Gateway = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations } } });
  t.teardown(() => gw.close());
  return { fakes, gw };
}

const checked = (r: { headers: Record<string, unknown> }) => String(r.headers['x-checked-urls']).split(',');
const calls = (fakes: FakeUpstream[]) => fakes.map((f) => f.calls);
const address = `0x${'11'.repeat(20)}`;
const balance = rpc('eth_getBalance', [address, '0x10']);
/** A whole single answer: the envelope's members after the id, as written. */
const answer = (members: string) => (call: RpcCallIn) => `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},${members}}`;
/** The honest upstreams answer after the liar. */
const later = (members: string): FakeOptions => ({ delayMs: 60, raw: answer(members) });

test('should not count a result beside a key a Go client reads instead: "Result" beside "result", an "ERROR" that no "error" key shows', async (t) => {
  for (const lie of ['"result":"0x2","Result":"0x999"', '"result":"0x2","ERROR":{"code":3,"message":"execution reverted","data":"0x08c379a0"}']) {
    const { fakes, gw } = await setup(t, [{ raw: answer(lie) }, later('"result":"0x2"'), later('"result":"0x2"')], 2);
    const r = await gw.post('/rpc/1', balance);
    t.is(r.status, 200, r.text);
    t.is(r.headers['x-confirmable'], 'true');
    t.deepEqual(checked(r), [fakes[1]!.url, fakes[2]!.url], lie);
    t.is(r.text, '{"jsonrpc":"2.0","id":1,"result":"0x2"}');
    t.deepEqual(calls(fakes), [1, 1, 1]);
  }
});

test('should not count an answer whose keys fold alike beyond ASCII ("reſult", U+017F)', async (t) => {
  const { fakes, gw } = await setup(t, [{ raw: answer('"result":"0x2","re\\u017fult":"0x999"') }, later('"result":"0x2"'), later('"result":"0x2"')], 2);
  const r = await gw.post('/rpc/1', balance);
  t.is(r.status, 200, r.text);
  t.deepEqual(checked(r), [fakes[1]!.url, fakes[2]!.url]);
  t.is(r.text, '{"jsonrpc":"2.0","id":1,"result":"0x2"}');
});

test('should not count a transaction with "To": null beside "to" (null counts as absent, but not to a Go client)', async (t) => {
  const tx = (extra: string) =>
    `"result":{"hash":"0x${'ef'.repeat(32)}","from":"${address}","to":"0x${'22'.repeat(20)}"${extra},"value":"0x1","blockNumber":"0x10"}`;
  const { fakes, gw } = await setup(t, [{ raw: answer(tx(',"To":null')) }, later(tx('')), later(tx(''))], 2);
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionByHash', [`0x${'ef'.repeat(32)}`]));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(checked(r), [fakes[1]!.url, fakes[2]!.url]);
  t.false(r.text.includes('"To"'), r.text);
  t.is(r.body.result.to, `0x${'22'.repeat(20)}`);
  t.deepEqual(calls(fakes), [1, 1, 1]);
});

test('should not count a revert whose error has "Data" beside the compared "data"', async (t) => {
  const revert = (extra: string) => `"error":{"code":3,"message":"execution reverted","data":"0x08c379a0"${extra}}`;
  const { fakes, gw } = await setup(t, [{ raw: answer(revert(',"Data":"0xdeadbeef"')) }, later(revert('')), later(revert(''))], 2);
  const r = await gw.post('/rpc/1', rpc('eth_call', [{ to: address, data: '0x' }, '0x10']));
  t.is(r.status, 200, r.text);
  t.deepEqual(checked(r), [fakes[1]!.url, fakes[2]!.url]);
  t.deepEqual(r.body.error, { code: 3, message: 'execution reverted', data: '0x08c379a0' });
  t.false(r.text.includes('deadbeef'), r.text);
});


test('should not count an error beside a "Result" that no "result" key shows, nor one whose "DATA" no "data" key shows', async (t) => {
  const reverted = '"error":{"code":-32000,"message":"execution reverted"}';
  const call = rpc('eth_call', [{ to: address, data: '0x' }, '0x10']);
  for (const lie of [`${reverted},"Result":"0x01"`, '"error":{"code":-32000,"message":"execution reverted","DATA":"0x08c379a0"}']) {
    const { fakes, gw } = await setup(t, [{ raw: answer(lie) }, later(reverted), later(reverted)], 2);
    const r = await gw.post('/rpc/1', call);
    t.is(r.status, 200, r.text);
    t.deepEqual(checked(r), [fakes[1]!.url, fakes[2]!.url], lie);
    t.is(r.text, `{"jsonrpc":"2.0","id":1,${reverted}}`);
  }
});

test('should name a key a case-insensitive parser reads as a JSON-RPC member as the failure when too few upstreams are left', async (t) => {
  const { gw } = await setup(t, [{ raw: answer('"result":"0x2","Error":{"code":1,"message":"x"}') }, { raw: answer('"result":"0x2"') }], 2);
  const r = await gw.post('/rpc/1', balance);
  t.is(r.status, 502, r.text);
  t.regex(JSON.stringify(r.body.error.data.failures), /key \\"Error\\", which case-insensitive parsers/);
});

test('should not count an answer with both a result and an error: the client would get a result nobody agreed on', async (t) => {
  const revert = '"error":{"code":3,"message":"execution reverted","data":"0x08c379a0"}';
  const { fakes, gw } = await setup(t, [{ raw: answer(`${revert},"result":"0x${'00'.repeat(31)}01"`) }, later(revert), later(revert)], 2);
  const r = await gw.post('/rpc/1', rpc('eth_call', [{ to: address, data: '0x' }, '0x10']));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(checked(r), [fakes[1]!.url, fakes[2]!.url]);
  t.false('result' in r.body, r.text);
  t.is(r.body.error.code, 3);
  t.deepEqual(calls(fakes), [1, 1, 1]);
});

test('should name an answer with both a result and an error as the failure when too few upstreams are left', async (t) => {
  const both = answer('"result":"0x1","error":{"code":-32000,"message":"nonce too low"}');
  const { fakes, gw } = await setup(t, [{ raw: both }, later('"error":{"code":-32000,"message":"nonce too low"}')], 2);
  const r = await gw.post('/rpc/1', balance);
  t.is(r.status, 502, r.text);
  t.deepEqual(r.body.error.data.failures.map((f: { upstream: string }) => f.upstream), [fakes[0]!.url.replace(/\/$/, '')]);
  t.regex(r.body.error.data.failures[0].reason, /both a result and an error/);
});

test('should not count an answer that is not UTF-8, even when it reads as the same U+FFFD characters', async (t) => {
  // geth writes invalid UTF-8 of a revert reason as U+FFFD; a liar's raw ED A0 80 (a surrogate in
  // CESU-8) reads as three U+FFFD here but as "\ud800" to a decoder that lets surrogates pass.
  const message = (text: string | Buffer) => (call: RpcCallIn) =>
    Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"error":{"code":-32000,"message":"execution reverted: `), Buffer.from(text), Buffer.from('"}}')]);
  const { fakes, gw } = await setup(
    t,
    [{ raw: message(Buffer.from([0xed, 0xa0, 0x80])) }, { delayMs: 60, raw: message('\\ufffd\\ufffd\\ufffd') }, { delayMs: 60, raw: message('\\ufffd\\ufffd\\ufffd') }],
    2,
  );
  const r = await gw.post('/rpc/1', balance);
  t.is(r.status, 200, r.text);
  t.deepEqual(checked(r), [fakes[1]!.url, fakes[2]!.url]);
  t.is(r.headers['x-forwarded-from'], fakes[1]!.url);
  t.true(r.text.includes('\\ufffd\\ufffd\\ufffd'), r.text);
  t.deepEqual(calls(fakes), [1, 1, 1]);
});

test('should not count a coalesced batch member with "Result" beside "result"; the member is confirmed by the others', async (t) => {
  const member = (lie: boolean) => (call: RpcCallIn) =>
    `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":"0x2"${lie && call.id === 'b' ? ',"Result":"0x999"' : ''}}`;
  const { fakes, gw } = await setup(
    t,
    [{ rawBatch: true, raw: member(true) }, { delayMs: 60, rawBatch: true, raw: member(false) }, { delayMs: 60, rawBatch: true, raw: member(false) }],
    2,
  );
  const r = await gw.post('/rpc/1', [rpc('eth_getBalance', [address, '0x10'], 'a'), rpc('eth_getBalance', [address, '0x11'], 'b')]);
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.text, '[{"jsonrpc":"2.0","id":"a","result":"0x2"},{"jsonrpc":"2.0","id":"b","result":"0x2"}]');
  t.deepEqual(calls(fakes), [1, 1, 1]);
});

// A refusal (a method the provider does not serve, a range too wide) is relayed when no upstream
// gave a vote. It is confirmed as an answer is, or not at all: only when N providers sent it alike.
const notServed = () => ({ error: { code: -32601, message: 'the method eth_getBalance does not exist/is not available', data: { balance: '0xdead' } } });
const tooWide = () => ({ error: { code: -32005, message: 'query returned more than 10000 results' } });

test('should not relay one upstream\'s refusal as confirmed when the other upstreams failed', async (t) => {
  const { fakes, gw } = await setup(t, [{ answer: notServed }, { profile: 'error500' }], 2);
  const r = await gw.post('/rpc/1', balance);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.error, notServed().error);
  t.is(r.headers['x-confirmable'], 'false');
  t.is(r.headers['x-required-confirmations'], '1');
  t.is(r.headers['x-forwarded-from'], fakes[0]!.url);
  t.deepEqual(calls(fakes), [1, 1]);
});

test('should not relay two different refusals as a confirmed one, alone or in a batch', async (t) => {
  const { fakes, gw } = await setup(t, [{ answer: notServed }, { answer: tooWide, delayMs: 30 }, { profile: 'error500' }], 2);
  const r = await gw.post('/rpc/1', balance);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.error, notServed().error);
  t.is(r.headers['x-confirmable'], 'false');
  t.is(r.headers['x-required-confirmations'], '1');
  const b = await gw.post('/rpc/1', [balance]);
  t.is(b.status, 200, b.text);
  t.deepEqual(b.body[0].error, notServed().error);
  t.is(b.headers['x-confirmable'], 'false');
  t.is(b.headers['x-required-confirmations'], '1');
  t.deepEqual(calls(fakes), [2, 2, 2]);
});

test('should relay a refusal N providers sent alike as confirmed', async (t) => {
  const { fakes, gw } = await setup(t, [{ answer: tooWide }, { answer: tooWide }, { profile: 'error500' }], 2);
  const r = await gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x10' }]));
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.error, tooWide().error);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.headers['x-required-confirmations'], '2');
  t.deepEqual(calls(fakes), [1, 1, 1]);
});
