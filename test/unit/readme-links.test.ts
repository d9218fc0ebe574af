/**
 * Every relative link of every README.md in the repository leads somewhere: the README of the
 * root and those of the rooms (lib/…, middleware/, config/) link into one another, and a section
 * that moves from one file to another must take its links along. For each tracked (or new, not
 * ignored) README.md, each markdown link `[text](target)` that is not `http:`, `https:` or
 * `mailto:` must name an existing file or directory, relative to the README; a `#fragment` into
 * a markdown file (or the README itself, for `(#fragment)`) must be the GitHub anchor of one of
 * its headings. Anchors are computed as GitHub computes them: the heading's text, lower-cased,
 * punctuation other than `-` and `_` removed (backticks too), spaces turned into `-`, and `-1`,
 * `-2`, … appended to a repeated one. Links inside code (fenced blocks, `code spans`) are not
 * links. The fixtures' READMEs are this project's own (they describe the fixtures), so they are
 * checked too.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { root as repoRoot } from '../support/paths.js';

const root = repoRoot;

/** The README.md files of the repository: tracked, or new and not ignored (node_modules never). */
function readmes(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', '*README.md'], { cwd: root, encoding: 'utf8' });
  return [...new Set(out.split('\n').filter((f) => f !== '' && !f.split('/').includes('node_modules')))]
    .filter((f) => path.basename(f) === 'README.md' && existsSync(path.join(root, f)))
    .sort();
}

/** Which lines are inside a fenced code block (the fences included). */
function fenced(lines: readonly string[]): boolean[] {
  let fence: string | undefined;
  return lines.map((line) => {
    const run = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined) {
      if (run !== undefined) fence = run;
      return run !== undefined;
    }
    if (run !== undefined && run[0] === fence[0] && run.length >= fence.length && line.trim() === run) fence = undefined;
    return true;
  });
}

/** The text with fenced code blocks and code spans blanked (same length, newlines kept), so offsets and lines stay. */
function withoutCode(text: string): string {
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  const lines = text.split('\n');
  const inFence = fenced(lines);
  const prose = lines.map((line, i) => (inFence[i] ? blank(line) : line)).join('\n');
  // code spans: a run of n backticks up to the next run of exactly n, within a paragraph
  let out = '';
  let i = 0;
  while (i < prose.length) {
    if (prose[i] !== '`') {
      const next = prose.indexOf('`', i);
      out += prose.slice(i, next < 0 ? prose.length : next);
      i = next < 0 ? prose.length : next;
      continue;
    }
    let n = 0;
    while (prose[i + n] === '`') n++;
    const closing = new RegExp(`(?<!\`)\`{${n}}(?!\`)`, 'g');
    closing.lastIndex = i + n;
    const end = closing.exec(prose);
    const span = end ? prose.slice(i, end.index + n) : undefined;
    if (span === undefined || span.includes('\n\n')) {
      out += prose.slice(i, i + n);
      i += n;
    } else {
      out += blank(span);
      i += span.length;
    }
  }
  return out;
}

/** GitHub's anchor for a heading's text (before the -1, -2 suffix of repeats). */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image: its text
    .replace(/<[^>]+>/g, '') // inline HTML tags
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a markdown text's headings (ATX `#` headings outside code), repeats suffixed, plus HTML `id`/`name` anchors. */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const add = (base: string) => {
    let candidate = base;
    for (let n = 1; found.has(candidate); n++) candidate = `${base}-${n}`;
    found.add(candidate);
  };
  const lines = markdown.split('\n');
  const inFence = fenced(lines);
  const code = withoutCode(markdown).split('\n');
  lines.forEach((line, i) => {
    if (inFence[i]) return;
    const m = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (m) add(slug(m[1] ?? ''));
    for (const a of code[i]!.matchAll(/<a\s[^>]*\b(?:name|id)="([^"]+)"/g)) found.add(a[1]!);
  });
  return found;
}

interface Link {
  line: number;
  text: string;
  target: string;
}

/** The markdown links `[text](target)` and images of a text, outside code. */
function links(markdown: string): Link[] {
  const text = withoutCode(markdown);
  const out: Link[] = [];
  for (const m of text.matchAll(/\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) {
    const target = m[2]!.replace(/^<(.*)>$/, '$1');
    const line = text.slice(0, m.index).split('\n').length;
    out.push({ line, text: markdown.slice(m.index! + 1, m.index! + 1 + m[1]!.length).replace(/\s+/g, ' '), target });
  }
  return out;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let set = anchorCache.get(file);
  if (!set) anchorCache.set(file, (set = anchors(readFileSync(file, 'utf8'))));
  return set;
}

/** Why a link is broken, or undefined when it leads somewhere. */
function brokenBecause(readme: string, target: string): string | undefined {
  if (/^(https?|mailto):/i.test(target)) return undefined;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return `a ${target.split(':')[0]}: link (only relative links, http:, https: and mailto: are expected)`;
  const hash = target.indexOf('#');
  const rawPath = hash < 0 ? target : target.slice(0, hash);
  const fragment = hash < 0 ? undefined : target.slice(hash + 1);
  let file = path.join(root, readme);
  if (rawPath !== '') {
    let decoded: string;
    try {
      decoded = decodeURIComponent(rawPath.split('?')[0]!);
    } catch {
      return 'the path is not valid percent-encoding';
    }
    file = decoded.startsWith('/') ? path.join(root, decoded) : path.resolve(path.dirname(path.join(root, readme)), decoded);
    if (!existsSync(file)) return `no such file or directory: ${path.relative(root, file) || '.'}`;
  }
  if (fragment === undefined) return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return undefined; // a fragment of a source file (#L10) or a directory is not checked
  let wanted: string;
  try {
    wanted = decodeURIComponent(fragment);
  } catch {
    return 'the fragment is not valid percent-encoding';
  }
  if (anchorsOf(file).has(wanted)) return undefined;
  return `${path.relative(root, file)} has no heading with the anchor #${wanted}`;
}

test('GitHub anchors: punctuation and backticks dropped, spaces to dashes, repeats numbered', (t) => {
  t.is(slug('Serving every public chain: `omnigate chainlist`'), 'serving-every-public-chain-omnigate-chainlist');
  t.is(slug('Response headers (every success)'), 'response-headers-every-success');
  t.is(slug('Adding methods: `confirmableMethods`'), 'adding-methods-confirmablemethods');
  t.is(slug('`--print-config`'), '--print-config');
  t.is(slug('`OMNIGATE_CHAINLIST_FILE`'), 'omnigate_chainlist_file');
  t.is(slug('Recomputing X-Json-Hash'), 'recomputing-x-json-hash');
  t.is(slug('lib/verify: agreement'), 'libverify-agreement');
  t.deepEqual([...anchors('# A\n\n## A\n\n```\n# not a heading\n```\n\n### A\n')], ['a', 'a-1', 'a-2']);
  t.deepEqual(
    links('See [Heads](lib/health/README.md#heads) and [the\ntable](#x), not `[code](nowhere)`.\n\n```md\n[in a block](nowhere)\n```\n'),
    [
      { line: 1, text: 'Heads', target: 'lib/health/README.md#heads' },
      { line: 1, text: 'the table', target: '#x' },
    ],
  );
});

test('every relative link of every README.md leads to a file, and its #fragment to a heading', (t) => {
  const files = readmes();
  t.true(files.includes('README.md'), 'the root README is among them');
  t.true(files.length >= 10, `READMEs found: ${files.join(', ')}`);
  const broken: string[] = [];
  let checked = 0;
  for (const readme of files) {
    for (const link of links(readFileSync(path.join(root, readme), 'utf8'))) {
      if (/^(https?|mailto):/i.test(link.target)) continue;
      checked++;
      const why = brokenBecause(readme, link.target);
      if (why) broken.push(`${readme}:${link.line}: [${link.text}](${link.target}): ${why}`);
    }
  }
  t.log(`${checked} relative links checked in ${files.length} READMEs`);
  if (broken.length > 0) t.fail(`${broken.length} broken link${broken.length === 1 ? '' : 's'}:\n${broken.join('\n')}`);
  else t.pass();
});
