import test from 'ava';
import { answerForSliced, InFlight, mergeKey } from '../../../../lib/verify/merge.js';
import { replySliceBytes, withReplyId } from '../../../../lib/jsonrpc/reply.js';
import type { AgreementEnd, AgreementRun } from '../../../../lib/verify/question.js';
import type { Chain, Upstream } from '../../../../lib/upstream/registry.js';
import type { RpcPayload } from '../../../../lib/jsonrpc/types.js';

const chain = { id: '1' } as Chain;

/** answerForSliced of a short answer (given before it returns). */
function answerFor(end: AgreementEnd, id: string | number): AgreementEnd {
  let given: AgreementEnd | undefined;
  answerForSliced(end, id, { gone: false }, (e) => (given = e));
  if (given === undefined) throw new Error('answerForSliced: a short answer was not given at once');
  return given;
}
const single = (method: string, params: unknown[], extra: object = {}): RpcPayload =>
  ({ calls: [{ id: 1, method, params, ...extra }], batch: false, raw: Buffer.alloc(0) }) as unknown as RpcPayload;

test('mergeKey: chain, N, method and params (keys in any order); never for a batch, a number in params or an aliased key', (t) => {
  const a = mergeKey(chain, 2, single('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }]));
  t.is(a, mergeKey(chain, 2, single('eth_getLogs', [{ toBlock: '0x2', fromBlock: '0x1' }])));
  t.not(a, mergeKey(chain, 3, single('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }])));
  // A top-up (counting a cached entry's votes) is joined only by top-ups.
  const topUp = mergeKey(chain, 2, single('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }]), true);
  t.not(topUp, undefined);
  t.not(a, topUp);
  t.is(topUp, mergeKey(chain, 2, single('eth_getLogs', [{ toBlock: '0x2', fromBlock: '0x1' }]), true));
  t.not(a, mergeKey({ id: '10' } as Chain, 2, single('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }])));
  t.not(a, mergeKey(chain, 2, single('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x3' }])));
  t.not(mergeKey(chain, 1, single('eth_call', [{ to: '0x1' }, '0x1'])), mergeKey(chain, 1, single('eth_estimateGas', [{ to: '0x1' }, '0x1'])));
  t.is(mergeKey(chain, 2, single('eth_getLogs', [{ fromBlock: '0x1', limit: 5 }])), undefined);
  t.is(mergeKey(chain, 2, single('eth_getBalance', ['0xaa', 1])), undefined);
  t.is(mergeKey(chain, 2, single('eth_getBalance', ['0xaa', '0x1'], { alias: 'Params' })), undefined);
  t.is(mergeKey(chain, 2, { calls: [{ id: 1, method: 'eth_chainId', params: [] }], batch: true, raw: Buffer.alloc(0) } as unknown as RpcPayload), undefined);
});

/** A run that ends when told to, and counts its aborts. */
function fakeRun() {
  let end: ((e: AgreementEnd) => void) | undefined;
  let aborts = 0;
  let starts = 0;
  const start = (finish: (e: AgreementEnd) => void): AgreementRun => {
    starts += 1;
    end = finish;
    return { called: [], abort: () => { aborts += 1; finish({ kind: 'failed', cause: 'aborted', required: 1, votes: [], failures: [], ineligible: [], called: [] }); } };
  };
  return { start, end: (e: AgreementEnd) => end!(e), aborts: () => aborts, starts: () => starts };
}

const agreed = (body: string): AgreementEnd => ({
  kind: 'agreed',
  verdict: { hash: 'h', members: [{ upstream: {} as Upstream, ok: true, body: Buffer.from(body), hash: 'h', ms: 1 }] },
});

test('InFlight: the first starts the run, the others join; all hear its one end; a new run after it ended', (t) => {
  const inFlight = new InFlight();
  const run = fakeRun();
  const heard: AgreementEnd[][] = [[], [], []];
  const a = inFlight.join('1\nk', run.start, (e) => heard[0]!.push(e));
  const b = inFlight.join('1\nk', run.start, (e) => heard[1]!.push(e));
  const c = inFlight.join('1\nk', run.start, (e) => heard[2]!.push(e));
  t.deepEqual([a.joined, b.joined, c.joined], [false, true, true]);
  t.is(run.starts(), 1);
  t.is(inFlight.size, 1);
  t.deepEqual([...inFlight.merged], [['1', 2]]);
  const end = agreed('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
  run.end(end);
  t.deepEqual(heard.map((h) => h.length), [1, 1, 1]);
  t.is(heard[1]![0], end);
  t.is(inFlight.size, 0);
  inFlight.join('1\nk', run.start, () => {});
  t.is(run.starts(), 2, 'a question asked after the end is asked again');
});

test('InFlight: a request leaving does not abort the run while another waits; the last one leaving does', (t) => {
  const inFlight = new InFlight();
  const run = fakeRun();
  const heard: string[] = [];
  const a = inFlight.join('1\nk', run.start, () => heard.push('a'));
  const b = inFlight.join('1\nk', run.start, () => heard.push('b'));
  a.run.abort();
  t.is(run.aborts(), 0);
  a.run.abort(); // twice: nothing more
  t.is(run.aborts(), 0);
  b.run.abort();
  t.is(run.aborts(), 1);
  t.deepEqual(heard, [], 'nobody left to hear the end');
  t.is(inFlight.size, 0);
});

test('InFlight: a start that throws ends the run in that error for the request, and is not kept', (t) => {
  const inFlight = new InFlight();
  const heard: AgreementEnd[] = [];
  inFlight.join('1\nk', () => { throw new Error('boom'); }, (e) => heard.push(e));
  t.is(heard[0]!.kind, 'error');
  t.is(inFlight.size, 0);
});

test('answerFor: the agreed answer under another id, every other byte the same; errors pass as they are', (t) => {
  const body = '{"jsonrpc":"2.0","result":{"n":12345678901234567890,"x":"0xAb"},"id":7}';
  const moved = answerFor(agreed(body), 'client "b"');
  t.is(moved.kind, 'agreed');
  if (moved.kind !== 'agreed') return;
  t.is(moved.verdict.members[0]!.body.toString(), '{"jsonrpc":"2.0","result":{"n":12345678901234567890,"x":"0xAb"},"id":"client \\"b\\""}');
  t.is(moved.verdict.hash, 'h');
  const failed: AgreementEnd = { kind: 'failed', cause: 'exhausted', required: 2, votes: [], failures: [], ineligible: [], called: [] };
  t.is(answerFor(failed, 3), failed);
  const noId = answerFor(agreed('[{"jsonrpc":"2.0","id":1,"result":1}]'), 2);
  t.is(noId.kind, 'error', 'never an answer under another request\'s id');
});

test('answerFor: the first member\'s bytes go out, so they are rewritten once and every member carries them, each keeping its upstream and fields', (t) => {
  const a = { name: 'a' } as unknown as Upstream;
  const b = { name: 'b' } as unknown as Upstream;
  const end: AgreementEnd = {
    kind: 'agreed',
    verdict: {
      hash: 'h',
      members: [
        { upstream: a, ok: true, body: Buffer.from('{"jsonrpc":"2.0","id":7,"result":"0x1"}'), hash: 'h', ms: 1 },
        { upstream: b, ok: true, body: Buffer.from('{"result":"0x1","id":7,"jsonrpc":"2.0"}'), hash: 'h', ms: 2, ignored: [] },
      ],
    },
  };
  const moved = answerFor(end, 8);
  if (moved.kind !== 'agreed') return t.fail(moved.kind);
  const [first, second] = moved.verdict.members;
  t.is(first!.body.toString(), '{"jsonrpc":"2.0","id":8,"result":"0x1"}');
  t.is(second!.body, first!.body, 'no member is left under another request\'s id');
  t.is(first!.upstream, a);
  t.is(second!.upstream, b);
  t.is(second!.ms, 2);
  t.deepEqual(second!.ignored, []);
  const refused: AgreementEnd = { kind: 'refused', confirmed: false, verdict: end.verdict };
  const movedRefusal = answerFor(refused, 'r');
  t.is(movedRefusal.kind, 'refused');
  if (movedRefusal.kind === 'refused') t.is(movedRefusal.verdict.members[1]!.body.toString(), '{"jsonrpc":"2.0","id":"r","result":"0x1"}');
});

test('answerForSliced: a long answer comes later, as withReplyId gives it; a short one and an error at once; nothing once the client is gone', async (t) => {
  const list = Array.from({ length: 2 * replySliceBytes / 16 }, (_, i) => `"0x${(i % 4096).toString(16).padStart(10, '0')}"`).join(',');
  const end = agreed(`{"jsonrpc":"2.0","result":[${list}],"id":1}`);
  let returned = false;
  const later = await new Promise<AgreementEnd>((resolve) => {
    answerForSliced(end, 'x', { gone: false }, resolve);
    returned = true;
  });
  t.true(returned, 'the long answer came after the call returned');
  if (later.kind !== 'agreed' || end.kind !== 'agreed') return t.fail();
  t.true(later.verdict.members[0]!.body.equals(withReplyId(end.verdict.members[0]!.body, 'x')!), 'the same bytes as the whole rewrite');
  t.true(later.verdict.members[0]!.body.toString().endsWith('],"id":"x"}'));
  const heard: AgreementEnd[] = [];
  answerForSliced(agreed('{"jsonrpc":"2.0","id":1,"result":"0x1"}'), 2, { gone: false }, (e) => heard.push(e));
  const failed: AgreementEnd = { kind: 'failed', cause: 'exhausted', required: 2, votes: [], failures: [], ineligible: [], called: [] };
  answerForSliced(failed, 2, { gone: false }, (e) => heard.push(e));
  t.is(heard.length, 2, 'both at once');
  t.is(heard[1], failed);
  const owner = { gone: false };
  let given = 0;
  answerForSliced(end, 'y', owner, () => given++);
  owner.gone = true;
  for (let i = 0; i < 30; i++) await new Promise((r) => setImmediate(r));
  t.is(given, 0);
});
