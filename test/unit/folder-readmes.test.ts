/**
 * Every folder of lib/, middleware/ and config/ says what it is for in a README.md of its own,
 * and that README names each of the folder's source files (one line of purpose each): a module
 * added without a word in its room's README fails here.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { root as repoRoot } from '../support/paths.js';

const root = repoRoot;

function folders(dir: string, out: string[] = []): string[] {
  out.push(dir);
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    if (entry.isDirectory()) folders(path.join(dir, entry.name), out);
  }
  return out;
}

test('every source folder has a README.md naming each of its .ts files', (t) => {
  const missing: string[] = [];
  const dirs = ['lib', 'middleware', 'config'].flatMap((d) => folders(d)).filter((d) => readdirSync(path.join(root, d)).some((f) => f.endsWith('.ts')));
  t.true(dirs.length > 10, 'the folders were found');
  for (const dir of dirs) {
    const readme = path.join(root, dir, 'README.md');
    if (!existsSync(readme)) {
      missing.push(`${dir}/: no README.md`);
      continue;
    }
    const text = readFileSync(readme, 'utf8');
    for (const file of readdirSync(path.join(root, dir)).filter((f) => f.endsWith('.ts'))) {
      if (!text.includes(`\`${file}\``)) missing.push(`${dir}/README.md does not name \`${file}\``);
    }
  }
  t.deepEqual(missing, []);
});
