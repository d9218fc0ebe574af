/**
 * The CLI's logger: JSON lines (level as a word, ISO time), the level honoured, every configured
 * secret scrubbed from each line whatever field carries it, short human lines when pretty.
 */
import test from 'ava';
import { createCliLogger, logLevels } from '../../../../lib/cli/logger.js';

function capture(options: Parameters<typeof createCliLogger>[0] = {}) {
  const lines: string[] = [];
  const log = createCliLogger({ ...options, write: (line) => lines.push(line) });
  return { log, lines };
}

test('should write one JSON line per entry, with the level as a word and an ISO time', (t) => {
  const { log, lines } = capture();
  log.info({ chain: '1' }, 'started');
  t.is(lines.length, 1);
  const entry = JSON.parse(lines[0]!);
  t.like(entry, { level: 'info', chain: '1', msg: 'started' });
  t.regex(entry.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.false('pid' in entry || 'hostname' in entry, 'no base fields');
});

test('should honour the level, child bindings included', (t) => {
  const { log, lines } = capture({ level: 'warn' });
  log.info('dropped');
  log.child({ reqId: 'r1' }).warn('kept');
  t.deepEqual(lines.map((l) => JSON.parse(l)).map((e) => [e.msg, e.reqId]), [['kept', 'r1']]);
  t.true(log.isLevelEnabled!('error'));
  t.false(log.isLevelEnabled!('debug'));
  t.deepEqual(logLevels, ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
});

test('should scrub every configured secret from a line, in any field', (t) => {
  const { log, lines } = capture({ secrets: ['abc123def456', 'zyx987'] });
  log.error({ err: 'connect to https://a.test/v2/abc123def456 failed', nested: { url: 'wss://b.test/zyx987' } }, 'upstream abc123def456 down');
  t.false(lines[0]!.includes('abc123def456'));
  t.false(lines[0]!.includes('zyx987'));
  t.like(JSON.parse(lines[0]!), { msg: 'upstream *** down', err: 'connect to https://a.test/v2/*** failed', nested: { url: 'wss://b.test/***' } });
});

test('should write short human lines when pretty', (t) => {
  const { log, lines } = capture({ pretty: true, secrets: ['abc123def456'] });
  log.warn({ upstream: 'https://a.test/abc123def456', n: 2 }, 'slow');
  t.regex(lines[0]!, /^\d\d:\d\d:\d\d\.\d{3} WARN  slow {2}upstream=https:\/\/a\.test\/\*\*\* n=2\n$/);
});
