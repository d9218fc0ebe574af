/**
 * `${VAR}` and `${VAR:-default}` in the config's values, read from the environment, so provider
 * keys stay out of the file. Works on the parsed YAML document, so comments and keys are never
 * touched and every problem names the YAML path and line. `$${` writes a literal `${`.
 * In an unquoted value, a result that is an integer or true/false is read as such
 * (`port: ${PORT:-5000}`); a quoted value always stays a string.
 */
import { isMap, isScalar, isSeq, Scalar, type LineCounter, type Node } from 'yaml';

export type Env = Readonly<Record<string, string | undefined>>;

export interface EnvSubstitution {
  /** One problem per value that could not be substituted (the value is left as written). */
  problems: { path: string; line: number | undefined; message: string }[];
  /** What each variable was replaced with (environment values only, not defaults). */
  used: Map<string, string>;
}

const reference = /\$\$\{|\$\{([^}]*)(\}?)/g;
const inner = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/** Replaces the references in every string value under `root`, in place. */
export function substituteEnv(root: unknown, env: Env, counter: LineCounter): EnvSubstitution {
  const out: EnvSubstitution = { problems: [], used: new Map() };
  const walk = (node: unknown, path: string) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : '?';
        walk(pair.value, path ? `${path}.${key}` : key);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => walk(item, `${path}[${i}]`));
    } else if (isScalar(node) && typeof node.value === 'string' && node.value.includes('${')) {
      const result = expand(node.value, env, out.used);
      if ('problem' in result) {
        out.problems.push({ path: path || '(root)', line: node.range ? counter.linePos(node.range[0]).line : undefined, message: result.problem });
        return;
      }
      node.value = node.type === Scalar.PLAIN ? retype(result.value) : result.value;
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

/** Hides the values taken from the environment in a message (`${NAME}` in their place). */
export function hideUsed(message: string, used: ReadonlyMap<string, string>): string {
  let out = message;
  for (const [name, value] of [...used].sort((a, b) => b[1].length - a[1].length)) {
    if (value.length >= 6) out = out.split(value).join(`\${${name}}`);
  }
  return out;
}
