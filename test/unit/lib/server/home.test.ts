import test from 'ava';
import { buildHome, prefersHtml } from '../../../../lib/server/home.js';

const cases: [string | undefined, boolean][] = [
  [undefined, false],
  ['*/*', false],
  ['application/json', false],
  ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', true],
  ['text/html;q=0.5, application/json', false],
  ['application/json;q=0.1, text/*', true],
  ['text/html;q=0', false],
];
for (const [accept, html] of cases) {
  test(`should ${html ? '' : 'not '}prefer HTML for Accept: ${accept ?? '(none)'}`, (t) => {
    t.is(prefersHtml(accept), html);
  });
}

test('should list the indexer routes only when the indexer is on', (t) => {
  const paths = (indexer: boolean) => buildHome({ chains: ['1', '10'], indexer }).routes.map((r) => r.path);
  t.false(paths(false).includes('/graphql'));
  t.true(paths(true).includes('/graphql'));
  t.deepEqual(buildHome({ chains: ['1', '10'], indexer: false }).routes[0]!.links, ['/rpc/1', '/rpc/10']);
});
