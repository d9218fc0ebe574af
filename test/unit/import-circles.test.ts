/**
 * Dependencies point one way: no import circle among the modules of lib/, middleware/ and
 * config/, type-only imports included (a type that two rooms import from each other is a type in
 * the wrong room). Reads the sources as text: every relative `import … from`, `export … from` and
 * `import()`; finds the strongly connected components of that graph (Tarjan).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { root as repoRoot } from '../support/paths.js';

const root = repoRoot;

function sources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) sources(rel, out);
    else if (rel.endsWith('.ts') && !rel.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

const importRe = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** Each module → the modules it imports (relative imports only; `.js` specifiers are the `.ts` files). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(path.join(root, file), 'utf8');
    const deps = new Set<string>();
    for (const m of text.matchAll(importRe)) {
      const target = path.normalize(path.join(path.dirname(file), (m[1] ?? m[2])!)).replace(/\.js$/, '.ts');
      if (known.has(target)) deps.add(target);
    }
    graph.set(file, [...deps]);
  }
  return graph;
}

/** The circles: strongly connected components of more than one module, or a module importing itself. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('no import circle in lib/, middleware/ or config/ (type-only imports included)', (t) => {
  const files = ['lib', 'middleware', 'config'].flatMap((dir) => sources(dir));
  t.true(files.length > 100, 'the sources were found');
  t.deepEqual(circles(importGraph(files)), []);
});

test('the circle finder finds a circle of two, of three, and a module importing itself', (t) => {
  const graph = new Map<string, string[]>([
    ['a', ['b']],
    ['b', ['a', 'c']],
    ['c', ['d']],
    ['d', ['e']],
    ['e', ['c']],
    ['f', ['f']],
    ['g', ['a']],
  ]);
  const byFirst = (a: string[], b: string[]) => a[0]!.localeCompare(b[0]!);
  t.deepEqual(circles(graph).sort(byFirst), [['a', 'b'], ['c', 'd', 'e'], ['f']]);
});
