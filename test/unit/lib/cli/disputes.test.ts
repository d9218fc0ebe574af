/**
 * `omnigate disputes diff`: the differences of one recorded dispute (the last by default, or
 * --line), in lines or --json, bounded by --limit and --width; exit 2 with a sentence for a file
 * that cannot be read, has no such line, or a line that is not a dispute.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { Command, CommanderError } from 'commander';
import { registerDisputesCommands } from '../../../../lib/cli/disputes.js';

let dir = '';
test.before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'omnigate-disputes-'));
});
test.after.always(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const answer = (result: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, result });
const record = (a: unknown, b: unknown, fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    time: '2026-01-01T00:00:00.000Z', chain: '1', requestId: 'r1', batch: false, required: 2,
    calls: [{ id: 1, method: 'eth_getBalance', params: ['0x1', '0x10'] }],
    groups: [{ hash: 'aaaaaaaaaaaaaaaa', upstreams: ['https://a.test/***'], body: answer(a) }, { hash: 'bbbbbbbbbbbbbbbb', upstreams: ['https://b.test/***'], body: answer(b) }],
    ...fields,
  });

let files = 0;
async function fileWith(...lines: string[]): Promise<string> {
  const file = path.join(dir, `d${(files += 1)}.jsonl`);
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

/** Runs `omnigate disputes diff …args`; the printed lines, or the exit code and message. */
async function diff(...args: string[]): Promise<{ lines: string[]; exitCode?: number; error?: string }> {
  const lines: string[] = [];
  const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  registerDisputesCommands(program, (line) => lines.push(line));
  program.commands.forEach((c) => c.exitOverride().configureOutput({ writeErr: () => {} }).commands.forEach((s) => s.exitOverride().configureOutput({ writeErr: () => {} })));
  try {
    await program.parseAsync(['disputes', 'diff', ...args], { from: 'user' });
    return { lines };
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    return { lines, exitCode: err.exitCode, error: err.message };
  }
}

test('should describe the last dispute of the file, its groups and each path where they differ', async (t) => {
  const file = await fileWith(record('0x1', '0x2'), record('0x5', '0x6', { requestId: 'r2' }));
  const { lines, exitCode } = await diff(file);
  t.is(exitCode, undefined);
  t.deepEqual(lines, [
    'dispute on line 2: 2026-01-01T00:00:00.000Z, chain 1, request r2, eth_getBalance, 2 agreeing answers required',
    '  group 0: https://a.test/*** (hash aaaaaaaaaaaa…)',
    '  group 1: https://b.test/*** (hash bbbbbbbbbbbb…)',
    'result',
    '  group 0: "0x5"',
    '  group 1: "0x6"',
  ]);
});

test('should pick a line with --line and print JSON with --json', async (t) => {
  const file = await fileWith(record('0x1', '0x2'), record('0x5', '0x6'));
  const { lines } = await diff(file, '--line', '1', '--json');
  t.deepEqual(JSON.parse(lines.join('\n')), { line: 1, differences: [{ path: 'result', values: [{ group: 0, value: '"0x1"' }, { group: 1, value: '"0x2"' }] }] });
});

test('should bound the differences with --limit and the values with --width', async (t) => {
  const file = await fileWith(record({ a: '0x1', b: '0x2', c: 'x'.repeat(50) }, { a: '0x3', b: '0x4', c: 'y'.repeat(50) }));
  const limited = JSON.parse((await diff(file, '--json', '--limit', '1')).lines.join('\n'));
  t.is(limited.differences.length, 1);
  const narrow = JSON.parse((await diff(file, '--json', '--width', '10')).lines.join('\n'));
  const c = narrow.differences.find((d: { path: string }) => d.path === 'result.c');
  t.deepEqual(c.values, [{ group: 0, value: '"xxxxxxxxx…' }, { group: 1, value: '"yyyyyyyyy…' }], 'ten characters, then … marks the cut');
});

test('should say when the answers differ only where the comparison ignores', async (t) => {
  const file = await fileWith(record('0xAB', '0xab')); // hex is compared lower-cased
  const { lines } = await diff(file);
  t.is(lines.at(-1), 'no difference in the compared fields (the answers differ only where the comparison ignores)');
});

test('should exit 2 with a sentence for a file it cannot use', async (t) => {
  const cases: [string, string[], RegExp][] = [
    ['a missing file', [path.join(dir, 'missing.jsonl')], /cannot read/],
    ['an empty file', [await fileWith('')], /records no dispute/],
    ['a line past the end', [await fileWith(record('0x1', '0x2')), '--line', '2'], /has 1 dispute: use --line 1 to 1/],
    ['a line that is not JSON', [await fileWith('{oops')], /line 1 of .* is not JSON/],
    ['a line without calls', [await fileWith('{"groups":[]}')], /is not a dispute: no `calls` list/],
    ['a line with one group', [await fileWith(JSON.stringify({ ...JSON.parse(record('0x1', '0x2')), groups: [{ body: '{}' }] }))], /two or more answers/],
  ];
  for (const [what, args, message] of cases) {
    const r = await diff(...args);
    t.is(r.exitCode, 2, what);
    t.regex(r.error ?? '', message, what);
  }
});

test('should refuse a --line or --limit that is not a positive integer', async (t) => {
  const file = await fileWith(record('0x1', '0x2'));
  for (const args of [['--line', '0'], ['--limit', 'x'], ['--width', '1.5']]) {
    const r = await diff(file, ...args);
    t.truthy(r.exitCode, args.join(' '));
    t.regex(r.error ?? '', /use an integer from 1/);
  }
});
