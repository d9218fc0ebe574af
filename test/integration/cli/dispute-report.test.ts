/**
 * Disputes that explain themselves, on the wire (issue 17 "Disputes"): a 502 whose answers
 * differ names the JSON paths where they differ with each group's value, one warn log line says
 * the same, and `disputes.file` gets one JSON line per dispute with the full answers (keys
 * scrubbed), rotated to `<file>.1` at `disputes.fileMaxBytes`.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { LogFn, Logger } from '../../../lib/log.js';
import { defaultAnswer, log, startFakeUpstream, type AnswerFn, type FakeOptions, type FakeUpstream } from '../../support/fake-upstream.js';
import { runCli } from '../../support/cli.js';
import { rpc, startGateway } from '../../support/gateway.js';

const KEY = 'k3yS3cr3tAbCdEf0123456789';
// (at the fakes' head, 0x10: a log range is voted on only by upstreams known to have its toBlock)
const getLogs = rpc('eth_getLogs', [{ fromBlock: '0x10', toBlock: '0x10' }]);
/** The honest chain, but log k of every eth_getLogs answer carries other data. */
const otherLogData = (k: number, data = '0xdead'): AnswerFn => (call) =>
  call.method === 'eth_getLogs' ? { result: [log(1), log(2), log(3)].map((l, i) => (i === k ? { ...l, data } : l)) } : defaultAnswer(call);
const honestLogs: AnswerFn = (call) => (call.method === 'eth_getLogs' ? { result: [log(1), log(2), log(3)] } : defaultAnswer(call));

async function fakes(t: ExecutionContext, options: FakeOptions[]): Promise<FakeUpstream[]> {
  const list = await Promise.all(options.map((o) => startFakeUpstream(o)));
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  return list;
}

function capture() {
  const lines: { level: string; obj: Record<string, unknown>; msg?: string }[] = [];
  const at = (level: string) => ((obj: Record<string, unknown> | string, msg?: string) => lines.push({ level, obj: typeof obj === 'string' ? {} : obj, msg: typeof obj === 'string' ? obj : msg })) as LogFn;
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
  return { lines, logger };
}

async function tempDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-disputes-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const readLines = async (file: string) => (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));

/** Waits (20 s at most: that long only when it is about to fail) until the dispute of request `id` is in `file` or its rotated `.1`. */
async function written(file: string, id: string): Promise<void> {
  const has = async (f: string) => (await readFile(f, 'utf8').catch(() => '')).includes(`"requestId":"${id}"`);
  for (const until = Date.now() + 20_000; Date.now() < until; await new Promise((r) => setTimeout(r, 10))) {
    if ((await has(file)) || (await has(`${file}.1`))) return;
  }
  throw new Error(`the dispute of ${id} was not written within 20 s`);
}

test('a 502 names the log field two upstreams disagree on, with both values, and one warn line says the same', async (t) => {
  const [a, b] = await fakes(t, [{ answer: honestLogs, path: `/v2/${KEY}` }, { answer: otherLogData(1) }]);
  const { lines, logger } = capture();
  const gw = await startGateway({ chains: { 1: { rpcs: [a!.url, b!.url] } } }, { logger });
  t.teardown(() => gw.close());

  const r = await gw.post('/confirmations/2/rpc/1', getLogs);
  t.is(r.status, 502, r.text);
  t.is(r.body.error.code, -32010);
  const { groups, differences } = r.body.error.data;
  t.is(groups.length, 2);
  const honest = groups.findIndex((g: { upstreams: string[] }) => !g.upstreams[0]!.includes(new URL(b!.url).host));
  t.true(honest >= 0);
  t.deepEqual(differences, [
    {
      path: 'result[1].data',
      values: [
        { group: honest, value: `${JSON.stringify(log(2).data).slice(0, 80)}…` }, // cut at 80 characters
        { group: 1 - honest, value: '"0xdead"' },
      ].sort((x, y) => x.group - y.group),
    },
  ]);
  t.false(r.text.includes(KEY), 'no key in the error');

  const warned = lines.filter((l) => l.level === 'warn' && /upstreams disagreed/.test(l.msg ?? ''));
  t.is(warned.length, 1, 'one log line per dispute');
  t.deepEqual(warned[0]!.obj.differences, differences);
  t.deepEqual(warned[0]!.obj.methods, ['eth_getLogs']);
  t.false(JSON.stringify(lines).includes(KEY), 'no key in the logs');
});

test('a dispute goes to disputes.file as one JSON line with both full answers and no key', async (t) => {
  // The upstream with a key in its URL also quotes the other's key-bearing URL in its answer, in
  // a field of the log schema (compared, so the differences quote it too; a field outside the
  // schema would be left out of the comparison).
  const otherKey = 'an0therK3yZyXw9876543210';
  let quoted = '';
  const quoting: AnswerFn = (call) => (call.method === 'eth_getLogs' ? { result: [log(1), log(2), { ...log(3), blockTimestamp: quoted }] } : defaultAnswer(call));
  const [a, b] = await fakes(t, [{ answer: quoting, path: `/v2/${KEY}` }, { answer: otherLogData(2), path: `/rpc/${otherKey}` }]);
  quoted = b!.url;
  t.true(quoted.includes(otherKey));
  const dir = await tempDir(t);
  const file = join(dir, 'disputes.jsonl');
  const gw = await startGateway({ chains: { 1: { rpcs: [a!.url, b!.url] } }, disputes: { file } });
  let closed = false;
  t.teardown(() => (closed ? undefined : gw.close()));

  const r = await gw.post('/confirmations/2/rpc/1', getLogs, { 'x-request-id': 'dispute-1' });
  t.is(r.status, 502, r.text);
  const ok = await gw.post('/confirmations/2/rpc/1', rpc('eth_chainId'));
  t.is(ok.status, 200, 'an agreement is no dispute');
  await gw.close(); // closing the pipeline waits for the file's writes
  closed = true;

  const text = await readFile(file, 'utf8');
  t.false(text.includes(KEY) || text.includes(otherKey), 'no key in the file');
  const records = await readLines(file);
  t.is(records.length, 1);
  const [d] = records;
  t.like(d, { chain: '1', requestId: 'dispute-1', methods: ['eth_getLogs'], batch: false, required: 2 });
  t.deepEqual(d.calls, [{ id: 1, method: 'eth_getLogs', params: getLogs.params }]);
  t.regex(d.time, /^\d{4}-\d\d-\d\dT/);
  t.deepEqual(d.groups.map((g: { hash: string }) => g.hash), r.body.error.data.groups.map((g: { hash: string }) => g.hash));
  t.deepEqual(d.differences, r.body.error.data.differences);
  const results = d.groups.map((g: { body: string }) => JSON.parse(g.body).result).sort((x: { data: string }[], y: { data: string }[]) => (x[2]!.data < y[2]!.data ? -1 : 1));
  t.deepEqual(results, [
    [log(1), log(2), { ...log(3), blockTimestamp: quoted.replace(otherKey, '***') }],
    [log(1), log(2), { ...log(3), data: '0xdead' }],
  ]);
  t.deepEqual(d.differences.map((x: { path: string }) => x.path), ['result[2].blockTimestamp', 'result[2].data']);
  t.regex(JSON.stringify(d.differences), /\*\*\*/, 'the quoted URL is in the differences, its key masked');
  t.deepEqual((await stat(file)).mode & 0o777, 0o600);
});

test('disputes.file is rotated to .1 before it passes disputes.fileMaxBytes, keeping one old file', async (t) => {
  const [a, b] = await fakes(t, [{ answer: honestLogs }, { answer: otherLogData(0) }]);
  const dir = await tempDir(t);
  const file = join(dir, 'disputes.jsonl');
  const maxBytes = 16_384; // about three disputes (two answers of three logs each)
  const gw = await startGateway({ chains: { 1: { rpcs: [a!.url, b!.url] } }, disputes: { file, fileMaxBytes: maxBytes } });
  let closed = false;
  t.teardown(() => (closed ? undefined : gw.close()));

  const sent: string[] = [];
  for (let i = 0; i < 8; i++) {
    const id = `rotation-${i}`;
    sent.push(id);
    const r = await gw.post('/confirmations/2/rpc/1', getLogs, { 'x-request-id': id });
    t.is(r.status, 502, r.text);
    // Appends are asynchronous and a dispute is dropped when more than the file's size waits
    // (backpressure, test/unit/lib/verify/dispute-log.test.ts): on a loaded machine three serial
    // 502s could outrun the disk.
    await written(file, id);
  }
  await gw.close();
  closed = true;

  const [current, old] = [await stat(file), await stat(`${file}.1`)];
  t.true(current.size <= maxBytes && current.size > 0, `${current.size} bytes`);
  t.true(old.size <= maxBytes && old.size > 0, `${old.size} bytes`);
  const kept = [...(await readLines(`${file}.1`)), ...(await readLines(file))].map((d) => d.requestId);
  t.true(kept.length >= 2 && kept.length < sent.length, `${kept.length} kept`);
  t.deepEqual(kept, sent.slice(sent.length - kept.length), 'the newest disputes, in order, across the two files');
});

test('a dispute in a batch is the member\'s own -32010, naming the path where the answers differ', async (t) => {
  const hashOf: AnswerFn = (call) =>
    call.method === 'eth_getBlockByNumber' ? { result: { ...(defaultAnswer(call) as { result: Record<string, unknown> }).result, stateRoot: `0x${'77'.repeat(32)}` } } : defaultAnswer(call);
  const [a, b] = await fakes(t, [{}, { answer: hashOf }]);
  const gw = await startGateway({ chains: { 1: { rpcs: [a!.url, b!.url] } } });
  t.teardown(() => gw.close());
  const r = await gw.post('/confirmations/2/rpc/1', [
    { jsonrpc: '2.0', id: 'chain', method: 'eth_chainId', params: [] },
    { jsonrpc: '2.0', id: 2, method: 'eth_getBlockByNumber', params: ['0x10', false] },
  ]);
  // each member on its own (issue 25): the other member is answered, the disputed one gets the 502's error
  t.is(r.status, 200, r.text);
  t.is(r.body[0].result, '0x539');
  t.is(r.body[1].id, 2);
  t.is(r.body[1].error.code, -32010);
  const { differences } = r.body[1].error.data;
  t.is(differences.length, 1);
  t.is(differences[0].path, 'result.stateRoot');
  t.deepEqual(differences[0].values.map((v: { value?: string; absent?: boolean }) => v.value ?? 'absent').sort(), [`"0x${'77'.repeat(32)}"`, 'absent'].sort());
});

test('a disputes.file that cannot be written is logged once and never fails a request', async (t) => {
  const [a, b] = await fakes(t, [{ answer: honestLogs }, { answer: otherLogData(0) }]);
  const dir = await tempDir(t);
  const file = join(dir, 'no-such-dir', 'disputes.jsonl');
  const { lines, logger } = capture();
  const gw = await startGateway({ chains: { 1: { rpcs: [a!.url, b!.url] } }, disputes: { file } }, { logger });
  let closed = false;
  t.teardown(() => (closed ? undefined : gw.close()));
  for (let i = 0; i < 3; i++) {
    const r = await gw.post('/confirmations/2/rpc/1', getLogs);
    t.is(r.status, 502, r.text);
    t.is(r.body.error.data.differences[0].path, 'result[0].data');
  }
  await gw.close();
  closed = true;
  const errors = lines.filter((l) => l.level === 'error' && /disputes\.file/.test(l.msg ?? ''));
  t.is(errors.length, 1, 'logged once');
  t.is(errors[0]!.obj.file, file);
});

test('a dispute larger than disputes.fileMaxBytes is not written, with a warning', async (t) => {
  const [a, b] = await fakes(t, [{ answer: honestLogs }, { answer: otherLogData(0) }]);
  const dir = await tempDir(t);
  const file = join(dir, 'disputes.jsonl');
  const { lines, logger } = capture();
  const gw = await startGateway({ chains: { 1: { rpcs: [a!.url, b!.url] } }, disputes: { file, fileMaxBytes: 2048 } }, { logger });
  let closed = false;
  t.teardown(() => (closed ? undefined : gw.close()));
  const r = await gw.post('/confirmations/2/rpc/1', getLogs);
  t.is(r.status, 502, r.text);
  await gw.close();
  closed = true;
  await t.throwsAsync(stat(file), { code: 'ENOENT' });
  const warned = lines.filter((l) => l.level === 'warn' && /not written to disputes\.file/.test(l.msg ?? ''));
  t.is(warned.length, 1);
  t.regex(warned[0]!.msg!, /larger than disputes\.fileMaxBytes \(2048\)/);
});

test('omnigate disputes diff prints where the answers of a recorded dispute differ, in full', async (t) => {
  const [a, b] = await fakes(t, [{ answer: honestLogs }, { answer: otherLogData(1) }]);
  const dir = await tempDir(t);
  const file = join(dir, 'disputes.jsonl');
  const gw = await startGateway({ chains: { 1: { rpcs: [a!.url, b!.url] } }, disputes: { file } });
  let closed = false;
  t.teardown(() => (closed ? undefined : gw.close()));
  t.is((await gw.post('/confirmations/2/rpc/1', getLogs, { 'x-request-id': 'to-diff' })).status, 502);
  await gw.close();
  closed = true;

  const run = runCli(['disputes', 'diff', file], {}, { t });
  t.is(await run.exited, 0, run.err.join(''));
  const out = run.out.join('');
  t.regex(out, /dispute on line 1: .*chain 1, request to-diff, eth_getLogs, 2 agreeing answers required/);
  t.regex(out, /\nresult\[1\]\.data\n/);
  t.true(out.includes(`: ${JSON.stringify(log(2).data)}\n`), 'the whole value, not cut at 80 characters');
  t.true(out.includes(': "0xdead"\n'));

  const json = runCli(['disputes', 'diff', file, '--line', '1', '--json'], {}, { t });
  t.is(await json.exited, 0, json.err.join(''));
  t.deepEqual(JSON.parse(json.out.join('')).differences.map((d: { path: string }) => d.path), ['result[1].data']);

  const beyond = runCli(['disputes', 'diff', file, '--line', '2'], {}, { t });
  t.is(await beyond.exited, 2);
  t.regex(beyond.err.join(''), /has 1 dispute: use --line 1 to 1/);
});

test('omnigate disputes diff exits 2 with a sentence on a line it cannot compare, never a stack or a raw TypeError', async (t) => {
  const dir = await tempDir(t);
  const body = (result: string) => `{"jsonrpc":"2.0","id":1,"result":${result}}`;
  const record = (groups: unknown[]) => `${JSON.stringify({ calls: [{ id: 1, method: 'eth_call', params: [] }], groups })}\n`;
  const cases: [string, string][] = [
    // `upstreams` that is not a list (a hand-edited or damaged file)
    ['upstreams.jsonl', record([{ hash: 'a', upstreams: 'x', body: body('1') }, { hash: 'b', upstreams: ['y'], body: body('2') }])],
    // an answer nested deeper than any upstream answer the gateway accepts
    ['deep.jsonl', record([{ hash: 'a', upstreams: ['x'], body: body(`${'['.repeat(20_000)}${']'.repeat(20_000)}`) }, { hash: 'b', upstreams: ['y'], body: body('2') }])],
  ];
  for (const [name, text] of cases) {
    const file = join(dir, name);
    await writeFile(file, text);
    const run = runCli(['disputes', 'diff', file], {}, { t });
    const code = await run.exited;
    const err = run.err.join('');
    t.true(code === 0 || code === 2, `${name}: exit ${code}: ${err}`);
    if (code === 2) t.regex(err, /line 1 of .* (?:is not a dispute|cannot be compared)/, name);
    t.notRegex(err, /is not a function|Maximum call stack|\n\s+at /, name);
  }
});
