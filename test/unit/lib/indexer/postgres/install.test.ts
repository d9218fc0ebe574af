/**
 * The embedded PostgreSQL's installation, read-only parts: the packaged binaries for this machine,
 * the stand-in name of a data directory, the shared places, and canReach asked of the system for
 * the current user (no user is created, nothing is copied).
 */
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'ava';
import { canReach, isRoot, packagedBinaries, sharedBases, standInName } from '../../../../../lib/indexer/postgres/install.js';

test('packagedBinaries should find executable initdb and postgres of the installed platform package', async (t) => {
  const bin = await packagedBinaries();
  for (const file of [bin.initdb, bin.postgres]) {
    t.true(file.startsWith(bin.root), file);
    t.notThrows(() => accessSync(file, constants.X_OK), file);
  }
  t.regex(bin.key, new RegExp(`^\\d+\\.\\d+\\.\\d+[^-]*(?:-[^-]+)*-${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}$`));
});

test('standInName should be readable, bounded and unique per path', (t) => {
  const name = standInName('/root/project/.omnigate/pgdata');
  t.regex(name, /^root-project-omnigate-pgdata-[0-9a-f]{12}$/);
  t.not(standInName('/a/b'), standInName('/a-b'), 'paths that read alike differ by their hash');
  t.is(standInName('/a/b'), standInName('/a/b'));
  t.true(standInName(`/${'x'.repeat(200)}`).length <= 60 + 13);
});

test('sharedBases should try /var/lib/omnigate first, then the temporary directory', (t) => {
  t.deepEqual(sharedBases(), ['/var/lib/omnigate', path.join(os.tmpdir(), 'omnigate')]);
});

test('isRoot should say whether the process runs as uid 0', (t) => {
  t.is(isRoot(), process.getuid?.() === 0);
});

test('canReach should ask the system whether a user can enter a directory and execute a file there', async (t) => {
  const me = { uid: process.getuid!(), gid: process.getgid!() };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'omnigate-reach-'));
  try {
    t.true(await canReach(me, dir));
    t.false(await canReach(me, path.join(dir, 'missing')));
    t.true(await canReach(me, '/bin', 'sh'));
    t.false(await canReach(me, dir, 'no-such-file'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
