/**
 * The table every list route, GraphQL field and OpenAPI entry is generated from: one entry per
 * list query, every path and field once, each path in lib/indexer/README.md's Routes table.
 */
import { readFileSync } from 'node:fs';
import test from 'ava';
import { LIST_ROUTES, TRANSACTION_PATH_PREFIX } from '../../../../lib/indexer/catalog.js';
import { LIST_QUERY_NAMES } from '../../../../lib/indexer/read/queries.js';
import { fromRoot } from '../../../support/paths.js';

test('should have one entry per list query', (t) => {
  t.deepEqual(LIST_ROUTES.map((r) => r.query).sort(), [...LIST_QUERY_NAMES].sort());
});

test('should give each path and GraphQL field once, every path under /api/ in kebab case', (t) => {
  const paths = LIST_ROUTES.flatMap((r) => r.paths);
  t.is(new Set(paths).size, paths.length);
  for (const p of paths) t.regex(p, /^\/api\/[a-z]+(?:[-/][a-z]+)*$/, p);
  const fields = LIST_ROUTES.map((r) => r.graphqlField);
  t.is(new Set(fields).size, fields.length);
  for (const f of fields) t.regex(f, /^[a-z][A-Za-z]*$/, f);
  for (const r of LIST_ROUTES) {
    t.regex(r.itemType, /^[A-Z][A-Za-z]*$/, r.query);
    t.true(r.summary.length > 0 && r.description.length > 0 && r.sortedBy.length > 0, r.query);
  }
  t.false(paths.some((p) => p.startsWith(TRANSACTION_PATH_PREFIX)));
});

test('should document every path in lib/indexer/README.md\'s Routes table', (t) => {
  const readme = readFileSync(fromRoot('lib/indexer/README.md'), 'utf8');
  const rows = readme.split('\n').filter((l) => l.startsWith('| GET |'));
  for (const r of LIST_ROUTES) for (const p of r.paths) t.true(rows.some((row) => row.includes(`\`${p}\``)), p);
});
