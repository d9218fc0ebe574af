/**
 * Files of the repository named from its root. ava runs the tests compiled into dist-test/
 * (package.json's `ava.typescript`), where only JavaScript is: a path relative to a test's own
 * file (`new URL('../fixtures/x.json', import.meta.url)`) would point into dist-test. Fixtures,
 * READMEs, the config files and the TypeScript sources a test hands to a child process are found
 * from the root instead, the first directory above this module that holds a package.json (the
 * repository's, from test/support/ as from dist-test/test/support/).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

function findRoot(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
  }
}

/** The repository's root directory. */
export const root = findRoot();

/** A path under the root: `fromRoot('config', 'omnigate.example.yaml')`. */
export const fromRoot = (...parts: string[]): string => path.join(root, ...parts);

/** The same as a file: URL (a directory's ends with `/`, to resolve names against it). */
export function urlFromRoot(...parts: string[]): URL {
  const url = pathToFileURL(fromRoot(...parts));
  if (parts.at(-1)?.endsWith('/') && !url.href.endsWith('/')) url.pathname += '/';
  return url;
}
