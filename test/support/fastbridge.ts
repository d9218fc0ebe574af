/**
 * Where the compiled FastBridgeV2 artifacts are: `$FASTBRIDGE_FIXTURES`, else the first
 * `shared/fixtures/fastbridge/` found walking up from the repository (the project keeps them
 * next to the checkout, `../shared/fixtures/fastbridge/`, also from a worktree further down).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function fastBridgeFixtures(): string {
  const fromEnv = process.env.FASTBRIDGE_FIXTURES;
  if (fromEnv) return fromEnv;
  let dir = fileURLToPath(new URL('../../', import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'shared', 'fixtures', 'fastbridge');
    if (existsSync(path.join(candidate, 'FastBridgeV2.json'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('FastBridgeV2 fixtures not found: set FASTBRIDGE_FIXTURES to the directory holding FastBridgeV2.json');
    dir = parent;
  }
}
