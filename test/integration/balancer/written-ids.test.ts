/**
 * A client's id comes back as the client wrote it, byte for byte, as a node echoes it: a client
 * may match answers by its own text, and `1.0`, `1e2`, `-0` or `"\u0031"` read as numbers (or a
 * string) that JSON.stringify writes otherwise. Whoever wrote the answer's id (an upstream that
 * re-serializes it, omnigate's own error, the cache, a batch): the client's text. An id that
 * cannot be echoed (beyond 2^53, out of the range of JSON numbers, an object) is refused
 * -32600 with id null and a message quoting it as written.
 */
import test, { type ExecutionContext } from 'ava';
import { finalizedChain, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { startGateway, type Gateway } from '../../support/gateway.js';

const ADDRESS = '0x00000000000000000000000000000000000000aa';
const hex = (n: number) => `0x${n.toString(16)}`;

/** A chain at block 100, finalized 90 (so a read at block 16 is cached once confirmed). */
const chainAnswer = finalizedChain(() => 90);

async function setup(t: ExecutionContext): Promise<{ list: FakeUpstream[]; gw: Gateway }> {
  // (the fakes parse the request and write the id as JSON.stringify does: `1.0` comes back `1`)
  const list = await Promise.all([0, 1].map(() => startFakeUpstream({ answer: chainAnswer })));
  const gw = await startGateway({ refreshInterval: 3600, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  await gw.rpc.startHeadTracking().runOnce();
  return { list, gw };
}

const call = (idText: string, method: string, params: unknown[] = []) => `{"jsonrpc":"2.0","id":${idText},"method":"${method}","params":${JSON.stringify(params)}}`;
/** The id's JSON text in an answer object's text (one top-level "id"). */
const idTextIn = (text: string) => /"id":(-?[\d.eE+-]+|"(?:[^"\\]|\\.)*"|null)/.exec(text)?.[1];

const written = ['1.0', '1e2', '-0', '"\\u0031"', '7.00E+0'];

for (const idText of written) {
  test(`the id ${idText} is echoed as written: a forwarded answer, omnigate's errors, a cache hit, a batch`, async (t) => {
    const { list, gw } = await setup(t);
    const forwarded = await gw.post('/rpc/1337', call(idText, 'eth_chainId'));
    t.is(forwarded.status, 200, forwarded.text);
    t.is(idTextIn(forwarded.text), idText, forwarded.text);
    t.is(forwarded.body.result, '0x539');
    const invalidParams = await gw.post('/rpc/1337', call(idText, 'eth_getBalance'));
    t.is(invalidParams.body.error.code, -32602, invalidParams.text);
    t.is(idTextIn(invalidParams.text), idText, invalidParams.text);
    const unknownChain = await gw.post('/rpc/999', call(idText, 'eth_chainId'));
    t.is(unknownChain.status, 404);
    t.is(idTextIn(unknownChain.text), idText, unknownChain.text);
    // Confirmed by 2 and kept (a final block); then a hit under the same text, and one under a plain id.
    const read = call(idText, 'eth_getBalance', [ADDRESS, hex(16)]);
    const miss = await gw.post('/confirmations/2/rpc/1337', read);
    t.is(miss.headers['x-cache'], 'MISS', miss.text);
    t.is(idTextIn(miss.text), idText, miss.text);
    const hit = await gw.post('/confirmations/2/rpc/1337', read);
    t.is(hit.headers['x-cache'], 'HIT', hit.text);
    t.is(idTextIn(hit.text), idText, hit.text);
    const plain = await gw.post('/confirmations/2/rpc/1337', call('5', 'eth_getBalance', [ADDRESS, hex(16)]));
    t.is(plain.headers['x-cache'], 'HIT');
    t.is(idTextIn(plain.text), '5', plain.text);
    t.is(hit.headers['x-json-hash'], miss.headers['x-json-hash']);
    const batch = await gw.post('/rpc/1337', `[${call(idText, 'eth_chainId')},${call('"b"', 'eth_chainId')},${call(idText.startsWith('"') ? '8.0' : '"x"', 'eth_getBalance')}]`);
    t.is(batch.status, 200, batch.text);
    const members = (batch.body as { id: unknown }[]).map((_m, i) => idTextIn(JSON.stringify(JSON.parse(batch.text)[i])));
    t.is(members.length, 3);
    t.true(batch.text.startsWith(`[{"jsonrpc":"2.0","id":${idText},`), batch.text);
    t.true(batch.text.includes(`"id":${idText.startsWith('"') ? '8.0' : '"x"'},"error"`), batch.text);
    t.true(list.every((f) => f.requests.length > 0));
  });
}

const refused: [string, RegExp][] = [
  ['1e400', /an id 1e400 out of the range of JSON numbers as parsers read them \(Infinity\)/],
  ['12345678901234567890', /an id 12345678901234567890 that JSON parsers round \(to 12345678901234567000\)/],
  ['9007199254740993', /an id 9007199254740993 that JSON parsers round/],
  ['1.5', /an id 1\.5 with a fraction/],
  ['{"a":1}', /an id that is an object/],
  ['[1]', /an id that is an array/],
];

for (const [idText, message] of refused) {
  test(`the id ${idText}, which cannot be echoed, is refused -32600 with id null and quoted as written`, async (t) => {
    const { list, gw } = await setup(t);
    const answer = await gw.post('/rpc/1337', call(idText, 'eth_chainId'));
    t.is(answer.status, 400, answer.text);
    t.is(answer.body.id, null);
    t.is(answer.body.error.code, -32600);
    t.regex(answer.body.error.message, message);
    t.regex(answer.body.error.message, /an id is a string or an integer within ±\(2\^53 - 1\)/);
    t.false(answer.text.includes('number null'));
    const inBatch = await gw.post('/rpc/1337', `[${call(idText, 'eth_chainId')},${call('2', 'eth_chainId')}]`);
    t.is(inBatch.status, 200);
    t.like(inBatch.body[0], { id: null, error: { code: -32600 } });
    t.regex(inBatch.body[0].error.message, message);
    t.like(inBatch.body[1], { id: 2, result: '0x539' });
    const forwarded = list.flatMap((f) => f.requests.map((r) => JSON.stringify(r.body)));
    t.is(forwarded.filter((b) => b.includes('"id":2,')).length, 1, 'the valid member is forwarded');
    t.false(forwarded.some((b) => b.includes(idText)), 'the refused ones are not');
  });
}
