import type { IncomingMessage } from 'node:http';
import test from 'ava';
import { mountPrefix, originForm, pathOf, splitUrl, targetHost } from '../../../../lib/pipeline/url.js';

const req = (url: string | undefined, originalUrl?: string) => ({ url, originalUrl }) as unknown as IncomingMessage;

test('should read the path without its query', (t) => {
  t.is(pathOf(req('/rpc/1?x=1')), '/rpc/1');
  t.is(pathOf(req('/rpc/1')), '/rpc/1');
  t.is(pathOf(req(undefined)), '/');
  t.deepEqual(splitUrl(req('/api/x?a=1&b=2')), { path: '/api/x', search: 'a=1&b=2' });
  t.deepEqual(splitUrl(req('/api/x')), { path: '/api/x', search: '' });
  t.deepEqual(splitUrl(req('/?')), { path: '/', search: '' });
});

test('should read an absolute-form target by its path and query, and its host without user-info', (t) => {
  t.is(originForm('http://gw.example:5000/rpc/1?x=1'), '/rpc/1?x=1');
  t.is(originForm('HTTPS://gw.example'), '/');
  t.is(originForm('http://gw.example?x=1'), '/?x=1');
  t.is(originForm('/rpc/1'), '/rpc/1');
  t.is(originForm('*'), '*');
  t.is(originForm('gw.example:443'), 'gw.example:443');
  t.is(pathOf(req('http://gw.example/rpc/1/KEY?x=1')), '/rpc/1/KEY');
  t.deepEqual(splitUrl(req('http://gw.example/api/x?a=1')), { path: '/api/x', search: 'a=1' });
  t.is(mountPrefix(req('http://gw.example/rpc/1', 'http://gw.example/gw/rpc/1')), '/gw');
  t.is(targetHost('http://user:pass@gw.example:5000/rpc/1'), 'gw.example:5000');
  t.is(targetHost('http://gw.example'), 'gw.example');
  t.is(targetHost('/rpc/1'), undefined);
  t.is(targetHost('*'), undefined);
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
