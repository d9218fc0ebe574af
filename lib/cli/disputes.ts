/**
 * `omnigate disputes diff FILE [--line N] [--limit K] [--width W] [--json]`: the differences of
 * one dispute recorded in a disputes.file (dispute-log.ts), read again from its full answers
 * (dispute.ts), without the 5-path, 80-character bounds of the error data. Exit 2 when the file
 * cannot be read, has no such line or the line is not a dispute. The chain's own ignoredFields
 * are not known here: the built-in list applies (fields outside the execution-apis schema are left
 * out as in the gateway, canonical.ts schemaFields). A damaged line (a field of the wrong type, an answer
 * nested too deeply to compare) is exit 2 too, with a sentence.
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import type { RpcCall, RpcPayload } from '../jsonrpc/types.js';
import { comparableAnswers, diffAnswers, type Difference } from '../verify/dispute.js';

interface Recorded {
  time?: string;
  chain?: string;
  requestId?: string;
  batch: boolean;
  calls: RpcCall[];
  required?: number;
  groups: { hash: string; upstreams: string[]; body: string }[];
}

const positive = (what: string) => (value: string): number => {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError(`${what}: use an integer from 1`);
  return n;
};

export function registerDisputesCommands(program: Command, print: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): void {
  const disputes = program.command('disputes').description('Read the disputes recorded in disputes.file');
  disputes
    .command('diff <file>')
    .description('print where the answers of a recorded dispute differ (default: the last one in the file)')
    .option('--line <n>', 'the dispute on this line of the file (1 is the first)', positive('--line'))
    .option('--limit <k>', 'at most this many differences', positive('--limit'), 20)
    .option('--width <w>', 'cut each value to this many characters', positive('--width'), 200)
    .option('--json', 'print the differences as JSON')
    .action(async (file: string, opts: { line?: number; limit: number; width: number; json?: boolean }, cmd: Command) => {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (err) {
        return cmd.error(`omnigate disputes diff: cannot read ${file}: ${(err as Error).message}`, { exitCode: 2, code: 'omnigate.disputes.read' });
      }
      const lines = text.split('\n').filter((l) => l.trim() !== '');
      if (lines.length === 0) return cmd.error(`omnigate disputes diff: ${file} records no dispute`, { exitCode: 2, code: 'omnigate.disputes.empty' });
      const n = opts.line ?? lines.length;
      if (n > lines.length) {
        return cmd.error(`omnigate disputes diff: ${file} has ${lines.length} dispute${lines.length === 1 ? '' : 's'}: use --line 1 to ${lines.length}`, { exitCode: 2, code: 'omnigate.disputes.line' });
      }
      const record = parseRecord(lines[n - 1]!);
      if (typeof record === 'string') return cmd.error(`omnigate disputes diff: line ${n} of ${file} ${record}`, { exitCode: 2, code: 'omnigate.disputes.record' });
      const payload: RpcPayload = { calls: record.calls, batch: record.batch, raw: Buffer.alloc(0) };
      let differences: Difference[];
      try {
        differences = diffAnswers(
          record.groups.map((g) => comparableAnswers(g.body, payload)),
          { limit: opts.limit, width: opts.width, ...(record.batch ? { batchIds: record.calls.map((c) => c.id) } : {}) },
        );
      } catch (err) {
        // A damaged or hand-edited line (an answer nested deeper than any the gateway accepts).
        return cmd.error(`omnigate disputes diff: line ${n} of ${file} cannot be compared: ${err instanceof RangeError ? 'an answer is nested too deeply' : (err as Error).message}`, { exitCode: 2, code: 'omnigate.disputes.record' });
      }
      if (opts.json) return print(JSON.stringify({ line: n, differences }, null, 2));
      for (const l of describe(record, n, differences)) print(l);
    });
}

function parseRecord(line: string): Recorded | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'is not JSON (a disputes.file has one JSON object per line)';
  }
  const r = value as Partial<Recorded>;
  const isCall = (c: unknown) => c !== null && typeof c === 'object' && typeof (c as RpcCall).method === 'string' && Array.isArray((c as RpcCall).params);
  if (r === null || typeof r !== 'object' || !Array.isArray(r.calls) || r.calls.length === 0 || !r.calls.every(isCall)) return 'is not a dispute: no `calls` list of {id, method, params}';
  const isGroup = (g: unknown) =>
    g !== null && typeof g === 'object' && typeof (g as { body?: unknown }).body === 'string' &&
    ((g as { upstreams?: unknown }).upstreams === undefined || (Array.isArray((g as { upstreams?: unknown }).upstreams) && ((g as { upstreams: unknown[] }).upstreams).every((u) => typeof u === 'string')));
  if (!Array.isArray(r.groups) || r.groups.length < 2 || !r.groups.every(isGroup)) {
    return 'is not a dispute: no `groups` list of two or more answers with a `body` (and `upstreams`, a list of names)';
  }
  return { ...r, batch: r.batch === true, calls: r.calls, groups: r.groups } as Recorded;
}

function describe(record: Recorded, n: number, differences: readonly Difference[]): string[] {
  const out = [
    `dispute on line ${n}: ${record.time ?? '(no time)'}, chain ${record.chain ?? '?'}, request ${record.requestId ?? '?'}, ${record.calls.map((c) => c.method).join(', ')}, ${record.required ?? '?'} agreeing answers required`,
  ];
  record.groups.forEach((g, i) => out.push(`  group ${i}: ${(g.upstreams ?? []).join(', ')} (hash ${String(g.hash).slice(0, 12)}…)`));
  if (differences.length === 0) out.push('no difference in the compared fields (the answers differ only where the comparison ignores)');
  for (const d of differences) {
    out.push(d.path);
    for (const v of d.values) out.push(`  group ${v.group}: ${v.absent ? '(absent)' : v.value}`);
  }
  return out;
}
