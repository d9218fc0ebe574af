/**
 * `${VAR}` and `${VAR:-default}` in the config's values, read from the environment, so provider
 * keys stay out of the file. Works on the parsed YAML document, so comments and keys are never
 * touched and every problem names the YAML path and line. `$${` writes a literal `${`.
 * In an unquoted value, a result that is an integer or true/false is read as such
 * (`port: ${PORT:-5000}`); a quoted value always stays a string.
 */
import { isMap, isScalar, isSeq, Scalar, type LineCounter, type Node } from 'yaml';
import { show, showUrl } from './sections.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface EnvSubstitution {
  /** One problem per value that could not be substituted (the value is left as written). */
  problems: { path: string; line: number | undefined; message: string }[];
  /** What each variable was replaced with (environment values only, not defaults). */
  used: Map<string, string>;
  /**
   * Each value that took something from the environment, by YAML path: its text as written
   * (`https://x/${KEY}`) and what it became, so that a problem quoting it can quote the former.
   */
  written: Map<string, { text: string; value: string | bigint | boolean }>;
  /**
   * The YAML paths of the values whose every `${` was written `$${` (a literal, which is no
   * template left unfilled; a `${` an environment value brought still is one).
   */
  literal: Set<string>;
}

const reference = /\$\$\{|\$\{([^}]*)(\}?)/g;
const inner = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/** Replaces the references in every string value under `root`, in place. */
export function substituteEnv(root: unknown, env: Env, counter: LineCounter): EnvSubstitution {
  const out: EnvSubstitution = { problems: [], used: new Map(), written: new Map(), literal: new Set() };
  const walk = (node: unknown, path: string) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : '?';
        walk(pair.value, path ? `${path}.${key}` : key);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => walk(item, `${path}[${i}]`));
    } else if (isScalar(node) && typeof node.value === 'string' && node.value.includes('${')) {
      const mine = new Map<string, string>();
      const result = expand(node.value, env, mine);
      for (const [name, value] of mine) out.used.set(name, value);
      if ('problem' in result) {
        out.problems.push({ path: path || '(root)', line: node.range ? counter.linePos(node.range[0]).line : undefined, message: result.problem });
        return;
      }
      const text = node.value;
      node.value = node.type === Scalar.PLAIN ? retype(result.value) : result.value;
      if (mine.size > 0) out.written.set(path || '(root)', { text, value: node.value as string | bigint | boolean });
      // Every `${` of the result written `$${` (none brought by an environment value): a literal.
      const escapes = text.split('$${').length - 1;
      if (escapes > 0 && result.value.split('${').length - 1 === escapes) out.literal.add(path || '(root)');
    }
  };
  walk(root as Node | null, '');
  return out;
}

/** One string with its references replaced, or the first problem found in it. */
export function expand(text: string, env: Env, used = new Map<string, string>()): { value: string } | { problem: string } {
  let problem: string | undefined;
  const value = text.replace(reference, (match, body: string | undefined, close: string) => {
    if (match === '$${') return '${';
    if (problem) return match;
    if (!close) {
      problem = `"${match}" has no closing brace: write \${NAME} or \${NAME:-default} (or $\${ for a literal \${)`;
      return match;
    }
    const parts = inner.exec(body ?? '');
    if (!parts) {
      problem = `"${match}" is not a variable reference: write \${NAME} or \${NAME:-default}, NAME made of letters, digits and _ (or $\${ for a literal \${)`;
      return match;
    }
    const [, name, fallback] = parts as unknown as [string, string, string | undefined];
    const set = env[name];
    if (set !== undefined && set !== '') {
      used.set(name, set);
      return set;
    }
    if (fallback !== undefined) return fallback;
    problem = `\${${name}} is ${set === undefined ? 'not set' : 'empty'} in the environment: set it (export ${name}=…) before starting, or give a default with \${${name}:-value}`;
    return match;
  });
  return problem ? { problem } : { value };
}

function retype(value: string): string | bigint | boolean {
  if (/^(0|[1-9][0-9]*)$/.test(value)) return BigInt(value);
  if (value === 'true' || value === 'false') return value === 'true';
  return value;
}

/**
 * A problem's message with every value taken from the environment hidden: where it quotes a value
 * that took one (the way the validators quote values: `show`, `showUrl`), the value as written
 * (`"https://x/${KEY}"`, `${PORT} is not an integer…`) takes its place, whatever the length of
 * the environment's value; a string value is replaced wherever it is quoted, an integer or
 * true/false only where the problem of its own path starts with it (a short number such as `1`
 * is replaced nowhere else: a message has other numbers). Last, an environment value of 6
 * characters or more left anywhere (inside a longer value) becomes `${NAME}`; one made of
 * digits only, where it stands alone (not inside a longer number).
 */
export function hideUsed(problem: { path: string; message: string }, substituted: Pick<EnvSubstitution, 'used' | 'written'>): string {
  let out = problem.message;
  for (const [path, { text, value }] of substituted.written) {
    if (typeof value !== 'string') {
      if (path === problem.path && out.startsWith(`${show(value)} `)) out = text + out.slice(show(value).length);
      continue;
    }
    // A URL written as references only (`${URL}`) holds no key of the file's: quoted as is.
    const textAsUrl = /^(\$\{[^}]*\})+$/.test(text) ? show(text) : showUrl(text);
    for (const [shown, instead] of [[show(value), show(text)], [showUrl(value), textAsUrl]] as const) {
      if (shown.startsWith('"')) out = out.split(shown).join(instead);
    }
  }
  for (const [name, value] of [...substituted.used].sort((a, b) => b[1].length - a[1].length)) {
    if (value.length < 6) continue;
    if (/^\d+$/.test(value)) out = out.replace(new RegExp(`(?<!\\d)${value}(?!\\d)`, 'g'), `\${${name}}`);
    else out = out.split(value).join(`\${${name}}`);
  }
  return out;
}
