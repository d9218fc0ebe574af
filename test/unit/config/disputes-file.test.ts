import test from 'ava';
import { defaults } from '../../../config/defaults.js';
import { validateConfig } from '../../../config/schema.js';

const minimal = { chains: { '1': { rpcs: ['https://a.example/v2/KEY'] } } };
const problemsOf = (disputes: unknown) => {
  const r = validateConfig({ ...minimal, disputes });
  return 'problems' in r ? r.problems : [];
};

test('should leave disputes.file unset by default, with 100 MiB as fileMaxBytes', (t) => {
  const r = validateConfig(minimal);
  if ('problems' in r) return t.fail(JSON.stringify(r.problems));
  t.false('file' in r.config.disputes);
  t.is(r.config.disputes.fileMaxBytes, 100 * 1024 * 1024);
  t.is(defaults.disputes.fileMaxBytes, 100 * 1024 * 1024);
});

test('should take disputes.file and disputes.fileMaxBytes', (t) => {
  const r = validateConfig({ ...minimal, disputes: { file: '/var/log/omnigate/disputes.jsonl', fileMaxBytes: 1_048_576 } });
  if ('problems' in r) return t.fail(JSON.stringify(r.problems));
  t.like(r.config.disputes, { file: '/var/log/omnigate/disputes.jsonl', fileMaxBytes: 1_048_576, window: defaults.disputes.window });
});

for (const [name, disputes, path, message] of [
  ['a file that is not a string', { file: 5 }, 'disputes.file', /5 is not a file path\. Example: file: /],
  ['an empty file', { file: ' ' }, 'disputes.file', /is not a file path/],
  ['a fileMaxBytes below 1 KiB', { fileMaxBytes: 10 }, 'disputes.fileMaxBytes', /10 is not an integer from 1024 to .*Example: fileMaxBytes: 104857600/],
  ['a misspelt key', { fileMaxSize: 10 }, 'disputes.fileMaxSize', /./],
] as const) {
  test(`should refuse ${name}, naming ${path}`, (t) => {
    const found = problemsOf(disputes).find((p) => p.path === path);
    t.truthy(found, JSON.stringify(problemsOf(disputes)));
    t.regex(found!.message, message);
  });
}
