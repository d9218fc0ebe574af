import { rm } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { packagedBinaries, standInName } from '../../../../../lib/indexer/postgres/install.js';
import { initdb, startPostgres } from '../../../../../lib/indexer/postgres/process.js';
import { tempDir } from '../../../../support/pg.js';

test('a binary that cannot be run is a clear error, not an unhandled spawn error', async (t) => {
  const dir = await tempDir('omnigate-spawn-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const real = await packagedBinaries();
  // A directory cannot be executed (EACCES); a missing file is ENOENT.
  const notExecutable = { ...real, initdb: dir, postgres: dir };
  const lines: string[] = [];
  const options = { binaries: notExecutable, dataDir: path.join(dir, 'pgdata'), onLog: (l: string) => lines.push(l) };
  const init = await t.throwsAsync(initdb(options, { user: 'u', password: 'p' }, []));
  t.is(init!.message, `cannot run ${dir}: permission denied: that user cannot reach or execute it (EACCES)`);
  const start = await t.throwsAsync(startPostgres(options, 1, [], 5_000));
  t.regex(start!.message, /^cannot run .+: permission denied: that user cannot reach or execute it \(EACCES\)$/);

  const missing = path.join(dir, 'no-such-postgres');
  const gone = await t.throwsAsync(startPostgres({ ...options, binaries: { ...real, postgres: missing } }, 1, [], 5_000));
  t.is(gone!.message, `cannot run ${missing}: file not found (ENOENT)`);
});

test('the stand-in name of a data directory is readable, file-name safe and unique per path', (t) => {
  const a = standInName('/root/og-test/.omnigate/pgdata');
  t.regex(a, /^root-og-test-omnigate-pgdata-[0-9a-f]{12}$/);
  t.is(standInName('/root/og-test/.omnigate/pgdata'), a);
  t.not(standInName('/root/og_test/.omnigate/pgdata'), a);
  const long = standInName(`/${'x'.repeat(300)}/pgdata`);
  t.true(long.length <= 60 + 13);
  t.regex(long, /^[A-Za-z0-9-]+$/);
});
