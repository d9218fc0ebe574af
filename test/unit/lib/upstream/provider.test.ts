import test from 'ava';
import { countProviders, normalizeUpstreamUrl, providerOf } from '../../../../lib/upstream/provider.js';

const norm = (text: string) => normalizeUpstreamUrl(text)?.href;

const forms: [string, string][] = [
  ['https://x.example/', 'https://x.example/'],
  ['https://x.example/#b', 'https://x.example/'],
  ['https://x.example/?', 'https://x.example/'],
  ['https://x.example/?#', 'https://x.example/'],
  ['HTTPS://X.Example', 'https://x.example/'],
  ['https://x.example:443/v2/KEY', 'https://x.example/v2/KEY'],
  ['wss://x.example:443/ws?', 'wss://x.example/ws'],
  ['http://x.example:80/', 'http://x.example/'],
  ['http://x.example:8545/', 'http://x.example:8545/'],
  ['https://x.example/v2/KEY?a=1#frag', 'https://x.example/v2/KEY?a=1'],
];
for (const [input, expected] of forms) {
  test(`should normalize ${input} to ${expected}`, (t) => {
    t.is(norm(input), expected);
  });
}

test('should return undefined for text that is not a URL', (t) => {
  t.is(normalizeUpstreamUrl('localhost 8545'), undefined);
});

/** Real-world pairs: [a, b, same provider?]. */
const pairs: [string, string, boolean][] = [
  ['https://eth-mainnet.g.alchemy.com/v2/KEY', 'wss://eth-mainnet.g.alchemy.com/v2/KEY', true],
  ['https://eth-mainnet.g.alchemy.com/v2/KEY', 'https://opt-mainnet.g.alchemy.com/v2/KEY', true],
  ['https://mainnet.infura.io/v3/KEY', 'wss://mainnet.infura.io/ws/v3/KEY', true],
  ['https://mainnet.infura.io/v3/KEY', 'https://eth-mainnet.g.alchemy.com/v2/KEY', false],
  ['https://ethereum-rpc.publicnode.com', 'wss://ethereum-rpc.publicnode.com', true],
  ['https://rpc.ankr.com/eth', 'https://rpc.ankr.com/eth/KEY', true],
  ['https://rpc.node.co.uk/', 'https://ws.node.co.uk/', true],
  ['https://rpc.node.co.uk/', 'https://rpc.other.co.uk/', false],
  ['https://a.herokuapp.com/', 'https://b.herokuapp.com/', false],
  ['https://KEY1.provider.io/', 'https://KEY2.provider.io/', true],
  ['http://127.0.0.1:8545/', 'ws://127.0.0.1:8545/', true],
  ['http://127.0.0.1:8545/', 'http://127.0.0.1:8546/', false],
  ['http://localhost:8545/', 'http://localhost:9545/', false],
  ['http://[::1]:8545/', 'ws://[::1]:8545/', true],
  // One node on the loopback interface under its several names, or an IPv4 address IPv4-mapped.
  ['http://localhost:8545/', 'http://127.0.0.1:8545/', true],
  ['http://[::1]:8545/', 'http://127.0.0.1:8545/', true],
  ['http://[::ffff:127.0.0.1]:8545/', 'http://127.0.0.1:8545/', true],
  ['http://node.localhost:8545/', 'http://127.0.0.1:8545/', true],
  ['http://[::ffff:10.0.0.5]/', 'http://10.0.0.5/', true],
  ['http://[::ffff:10.0.0.5]/', 'http://10.0.0.6/', false],
  // A name written fully qualified (WHATWG keeps the final dot), and the unspecified addresses (they reach this host).
  ['http://localhost.:8545/', 'http://127.0.0.1:8545/', true],
  ['http://node.localhost.:8545/', 'http://127.0.0.1:8545/', true],
  ['http://mynode.:8545/', 'http://mynode:8545/', true],
  ['https://eth.drpc.org./', 'https://eth.drpc.org/', true],
  ['http://0.0.0.0:8545/', 'http://127.0.0.1:8545/', true],
  ['http://[::]:8545/', 'http://localhost:8545/', true],
  ['http://0.0.0.0:8545/', 'http://0.0.0.0:8546/', false],
  ['http://localhost:8545/', 'http://127.0.0.2:8545/', false],
  ['http://10.0.0.5/', 'http://10.0.0.6/', false],
];
for (const [a, b, same] of pairs) {
  test(`should count ${a} and ${b} as ${same ? 'one provider' : 'two providers'}`, (t) => {
    t.is(providerOf(a) === providerOf(b), same, `${providerOf(a)} vs ${providerOf(b)}`);
  });
}

test('should name the provider by its registrable domain, or host:port without one', (t) => {
  t.is(providerOf('https://eth-mainnet.g.alchemy.com/v2/KEY'), 'alchemy.com');
  t.is(providerOf('https://rpc.node.co.uk/'), 'node.co.uk');
  t.is(providerOf('https://KEY.provider.io/'), 'provider.io');
  t.is(providerOf('http://127.0.0.1:8545/'), '127.0.0.1:8545');
  t.is(providerOf('https://127.0.0.1/'), '127.0.0.1:443');
  t.is(providerOf('ws://[::1]:8546/'), '127.0.0.1:8546');
  t.is(providerOf('http://localhost/'), '127.0.0.1:80');
  t.is(providerOf('http://[::ffff:10.0.0.5]:8545/'), '10.0.0.5:8545');
  t.is(providerOf('http://[2001:db8::1]:8545/'), '[2001:db8::1]:8545');
});

test('should let an explicit label override the derived identity', (t) => {
  t.is(providerOf('http://127.0.0.1:8545/', 'acme'), 'acme');
  t.is(providerOf('https://mainnet.infura.io/v3/KEY', 'infura'), 'infura');
});

test('should count the distinct providers of a chain, labels included', (t) => {
  const urls = ['https://eth-mainnet.g.alchemy.com/v2/K', 'wss://eth-mainnet.g.alchemy.com/v2/K', 'https://mainnet.infura.io/v3/K', 'http://127.0.0.1:8545/'];
  t.is(countProviders(urls), 3);
  t.is(countProviders(urls, [undefined, undefined, 'alchemy.com', undefined]), 2, 'a label may join another provider');
  t.is(countProviders(urls, [undefined, 'second-account', undefined, undefined]), 4, 'or split one');
});
