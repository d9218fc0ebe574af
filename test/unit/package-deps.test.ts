/**
 * What the shipped code imports is installed for its users: every package imported by lib/,
 * middleware/ and config/ (what dist/ is built from) is in package.json's dependencies, not only
 * in devDependencies (viem once was: an install without dev dependencies could not start).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import test from 'ava';
import { root as repoRoot } from '../support/paths.js';

const root = repoRoot;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`). */
const packageOf = (spec: string) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);

test('every package the shipped code imports is a dependency', (t) => {
  const builtins = new Set(builtinModules);
  const missing = new Set<string>();
  let seen = 0;
  for (const file of ['lib', 'middleware', 'config'].flatMap(sources)) {
    const text = readFileSync(file, 'utf8');
    // Static imports and re-exports (`import type` is erased), and dynamic imports of a literal.
    for (const m of text.matchAll(/^\s*(?:import(?!\s+type\b)|export)\b[^'"]*?from\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/gm)) {
      const spec = m[1] ?? m[2]!;
      if (spec.startsWith('.') || spec.startsWith('node:') || builtins.has(spec)) continue;
      seen += 1;
      if (!Object.hasOwn(pkg.dependencies, packageOf(spec))) missing.add(`${packageOf(spec)} (${file.slice(root.length + 1)})`);
    }
  }
  t.true(seen > 10, `${seen} package imports found`);
  t.deepEqual([...missing], []);
});
