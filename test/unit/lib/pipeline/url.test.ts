import type { IncomingMessage } from 'node:http';
import test from 'ava';
import { mountPrefix, pathOf, splitUrl } from '../../../../lib/pipeline/url.js';

const req = (url: string | undefined, originalUrl?: string) => ({ url, originalUrl }) as unknown as IncomingMessage;

test('should read the path without its query', (t) => {
  t.is(pathOf(req('/rpc/1?x=1')), '/rpc/1');
  t.is(pathOf(req('/rpc/1')), '/rpc/1');
  t.is(pathOf(req(undefined)), '/');
  t.deepEqual(splitUrl(req('/api/x?a=1&b=2')), { path: '/api/x', search: 'a=1&b=2' });
  t.deepEqual(splitUrl(req('/api/x')), { path: '/api/x', search: '' });
  t.deepEqual(splitUrl(req('/?')), { path: '/', search: '' });
});

const prefixes: [string, string | undefined, string][] = [
  ['/rpc/1', undefined, ''],
  ['/rpc/1', '/rpc/1', ''],
  ['/rpc/1', '/gw/rpc/1', '/gw'],
  ['/rpc/1?a=1', '/gw/v1/rpc/1?a=1', '/gw/v1'],
  ['/', '/gw', '/gw'],
  ['/', '/gw/', '/gw'],
  ['/health', '/other/path', ''],
  ['/rpc/1', '/<script>/rpc/1', ''],
  ['/rpc/1', '/a"b/rpc/1', ''],
];
for (const [url, original, prefix] of prefixes) {
  test(`should read the mount prefix of ${original ?? '(no originalUrl)'} serving ${url} as ${JSON.stringify(prefix)}`, (t) => {
    t.is(mountPrefix(req(url, original)), prefix);
  });
}
