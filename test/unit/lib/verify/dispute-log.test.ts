import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { LogFn, Logger } from '../../../../lib/log.js';
import { openDisputeFile } from '../../../../lib/verify/dispute-log.js';

function capture() {
  const lines: { level: string; obj: Record<string, unknown>; msg?: string }[] = [];
  const at = (level: string) => ((obj: Record<string, unknown> | string, msg?: string) => lines.push({ level, obj: typeof obj === 'string' ? {} : obj, msg })) as LogFn;
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
  return { lines, logger };
}

test('should drop disputes past the queue bound with one counted warning, without building them', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-dispute-log-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'd.jsonl');
  const { lines, logger } = capture();
  const f = openDisputeFile(file, { maxBytes: 1 << 20, maxQueuedBytes: 600, logger });
  let built = 0;
  const record = (i: number) => () => {
    built++;
    return { i, pad: 'x'.repeat(600) };
  };
  // Appended in one tick: the first write is still under way when the others come.
  for (let i = 0; i < 5; i++) f.append(record(i));
  t.is(f.dropped, 4);
  t.is(built, 1, 'a dispute dropped at a full queue is not even built');
  await f.flush();
  const warnings = lines.filter((l) => l.level === 'warn');
  t.is(warnings.length, 1, 'one warning per episode');
  t.regex(warnings[0]!.msg!, /backpressure/);
  t.deepEqual((await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l).i), [0]);

  // Written again once the queue drained; a later episode warns again.
  f.append(record(5));
  await f.flush();
  for (let i = 6; i < 9; i++) f.append(record(i));
  await f.flush();
  t.deepEqual((await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l).i), [0, 5, 6]);
  t.is(f.dropped, 6);
  t.is(lines.filter((l) => l.level === 'warn').length, 2);
});
