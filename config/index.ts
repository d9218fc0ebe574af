/**
 * Loading: YAML text → validated, deep-frozen config. Problems carry the YAML path, the line
 * and a fix, and all of them are reported at once (ConfigError.problems).
 */
import { readFile } from 'node:fs/promises';
import { LineCounter, isMap, isSeq, isScalar, parseDocument, type Node } from 'yaml';
import { ConfigError } from '../lib/errors.js';
import { hideUsed, substituteEnv, type Env } from './env.js';
import { validateConfig, type OmnigateConfig } from './schema.js';

export type { OmnigateConfig, ChainConfig } from './schema.js';
export { chainsBelowConfirmations, validateConfig } from './schema.js';
export { defaults } from './defaults.js';

export interface ParseOptions {
  /** Where `${VAR}` references are read from (default process.env). */
  env?: Env;
}

export async function loadConfigFile(file: string, options: ParseOptions = {}): Promise<OmnigateConfig> {
  return parseConfig(await readConfigText(file), file, options);
}

/** The config file's text (a ConfigError naming the file when it cannot be read). */
export async function readConfigText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`cannot read the config file: ${(err as Error).message}`], file);
  }
}

/**
 * Parses YAML text (comments allowed). Integers are read exactly (as bigint), so large chain ids
 * never wrap; validateConfig turns each one a JS number holds exactly into that number.
 * `${VAR}` / `${VAR:-default}` in values are replaced from the environment (config/env.ts).
 */
export function parseConfig(text: string, source = 'config', options: ParseOptions = {}): OmnigateConfig {
  const lineCounter = new LineCounter();
  // merge: YAML merge keys (`<<: *defaults`), as docker-compose files and most YAML tools read them.
  const doc = parseDocument(text, { intAsBigInt: true, lineCounter, uniqueKeys: true, merge: true });
  if (doc.errors.length > 0) {
    // One mistake often yields several errors (each later one a consequence): the first is the one to fix.
    const first = doc.errors[0]!;
    const at = first.linePos?.[0];
    const what = first.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigError([`${at ? `line ${at.line}, column ${at.col}: ` : ''}YAML syntax error: ${what}`], source);
  }
  const twice = chainIdsListedTwice(doc.contents, lineCounter);
  if (twice.length > 0) throw new ConfigError(twice, source);
  const substituted = substituteEnv(doc.contents, options.env ?? process.env, lineCounter);
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    if (!(err instanceof ReferenceError)) throw err;
    const bomb = /excessive alias/i.test(err.message);
    throw new ConfigError(
      [bomb
        ? 'YAML aliases expand to a huge document (nested *aliases, a "billion laughs"): refused. Write the values out instead of nesting aliases'
        : `YAML aliases: ${err.message}`],
      source,
    );
  }
  const result = validateConfig(raw, { literal: substituted.literal });
  // A value whose ${VAR} could not be substituted is reported for that, not for what it then
  // looks like (a template URL, not an integer…); every other problem is reported as well.
  const unset = new Map(substituted.problems.map((p) => [p.path, p]));
  const problems = ('problems' in result ? result.problems : []).map((p) => {
    const envProblem = unset.get(p.path);
    unset.delete(p.path);
    return envProblem ?? { ...p, line: lineOf(doc.contents, p.path, lineCounter) };
  });
  problems.push(...unset.values());
  if (problems.length > 0 || 'problems' in result) {
    throw new ConfigError(
      problems.map((p) => `${p.path}${p.line ? ` (line ${p.line})` : ''}: ${hideUsed(p, substituted)}`),
      source,
    );
  }
  return deepFreeze(result.config);
}

/**
 * `1:` and `"1":` (or `01:`) are different YAML keys but the same chain: toJS() would keep only
 * the last one, silently, so they are caught on the document.
 */
function chainIdsListedTwice(root: unknown, counter: LineCounter): string[] {
  if (!isMap(root)) return [];
  const chains = root.items.find((p) => isScalar(p.key) && p.key.value === 'chains')?.value;
  if (!isMap(chains)) return [];
  const lines = new Map<string, number>();
  const problems: string[] = [];
  for (const pair of chains.items) {
    if (!isScalar(pair.key) || !/^\d+$/.test(String(pair.key.value))) continue;
    const id = BigInt(String(pair.key.value)).toString();
    const line = pair.key.range ? counter.linePos(pair.key.range[0]).line : 0;
    const first = lines.get(id);
    if (first !== undefined) problems.push(`chains.${id} (line ${line}): chain ${id} is already listed at line ${first}: merge the two entries`);
    else lines.set(id, line);
  }
  return problems;
}

/** The line of the node a path such as `chains.1338.rpcs[2]` names, or of its nearest parent. */
/**
 * Problems found after loading (a keyFile that cannot be read: `access.keys[0].keyFile: …`), each
 * given the line of its YAML path in `text`, as the loader's own problems are.
 */
export function withLines(text: string, problems: readonly string[]): string[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { intAsBigInt: true, lineCounter });
  return problems.map((p) => {
    const path = /^[^\s:]+/.exec(p)?.[0];
    const line = path === undefined ? undefined : lineOf(doc.contents, path, lineCounter);
    return line === undefined ? p : `${path} (line ${line})${p.slice(path!.length)}`;
  });
}

function lineOf(root: unknown, path: string, counter: LineCounter): number | undefined {
  const segments = path.replace(/\[(\d+)\]/g, '.$1').split('.').filter(Boolean);
  let node = root as Node | null | undefined;
  let line: number | undefined;
  for (const segment of segments) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === segment);
      if (!pair) break;
      const keyRange = isScalar(pair.key) ? pair.key.range : undefined;
      if (keyRange) line = counter.linePos(keyRange[0]).line;
      node = pair.value as Node | null;
    } else if (isSeq(node)) {
      node = node.items[Number(segment)] as Node | undefined;
    } else break;
    const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
    if (range && !isMap(node)) line = counter.linePos(range[0]).line;
  }
  return line;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
