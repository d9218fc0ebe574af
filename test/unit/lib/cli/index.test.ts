/**
 * The `omnigate` command line, run from its source (node --import tsx lib/cli/index.ts) as a child
 * process: the version, exit 2 for bad arguments, a bad config or a bad LOG_LEVEL with a sentence,
 * and `chainlist --print-config` printing a config from the installed chain list (no network).
 * The end-to-end runs of the built CLI are in test/integration/cli/.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import test from 'ava';
import { parse } from 'yaml';
import { runCli } from '../../../support/cli.js';
import type { Teardown } from '../../../support/procs.js';

const source = resolve('lib/cli/index.ts');
const version = (JSON.parse(readFileSync(resolve('package.json'), 'utf8')) as { version: string }).version;

async function omnigate(t: Teardown, args: string[], env: Record<string, string> = {}) {
  const run = runCli(args, env, { t, cli: source, nodeArgs: ['--import', 'tsx'] });
  const code = await run.exited;
  return { code, out: run.out.join(''), err: run.err.join('') };
}

test('should print its version', async (t) => {
  const r = await omnigate(t, ['--version']);
  t.is(r.code, 0);
  t.is(r.out.trim(), version);
});

test('should exit 2 for an unknown command or a bad --port', async (t) => {
  t.is((await omnigate(t, ['nonsense'])).code, 2);
  const port = await omnigate(t, ['serve', '--config', 'config/omnigate.example.yaml', '--port', 'abc']);
  t.is(port.code, 2);
  t.regex(port.err, /port/i);
});

test('should exit 2 with a sentence for a config file that cannot be read', async (t) => {
  const r = await omnigate(t, ['serve', '--config', 'no/such/file.yaml']);
  t.is(r.code, 2);
  t.regex(r.err, /^omnigate: .*no\/such\/file\.yaml/m);
});

test('should exit 2 naming the levels for a LOG_LEVEL that is not one', async (t) => {
  const r = await omnigate(t, ['serve', '--config', 'config/omnigate.example.yaml'], { LOG_LEVEL: 'loud' });
  t.is(r.code, 2);
  t.regex(r.err, /LOG_LEVEL="loud" is not a log level: use one of fatal, error, warn, info, debug, trace, silent/);
});

test('chainlist --print-config should print a config of the chains asked, from the installed list', async (t) => {
  const r = await omnigate(t, ['chainlist', '--print-config', '--chains', '1,10']);
  t.is(r.code, 0, r.err);
  const config = parse(r.out) as { chains: Record<string, { rpcs: unknown[] }> };
  t.deepEqual(Object.keys(config.chains).sort(), ['1', '10']);
  t.true(config.chains['1']!.rpcs.length > 0);
});
