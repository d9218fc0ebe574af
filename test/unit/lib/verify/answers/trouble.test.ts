import test from 'ava';
import { errorKind } from '../../../../../lib/verify/answers/trouble.js';

/** [client or provider, code, message, what it is] */
const cases: [string, number, string, 'trouble' | 'refusal' | 'answer'][] = [
  ['geth eth_simulateV1, a fault of the call', -32603, 'err: nonce has max value: address 0xC000000000000000000000000000000000000000, nonce: 18446744073709551615 (supplied gas 50000000)', 'answer'],
  ['a bare internal error', -32603, 'Internal error', 'trouble'],
  ['Alchemy', 429, 'Your app has exceeded its compute units per second capacity.', 'trouble'],
  ['Infura rate limit', -32005, 'daily request count exceeded, request rate limited', 'trouble'],
  ['Infura range', -32005, 'query returned more than 10000 results', 'refusal'],
  ['QuickNode', -32007, '100/second request limit reached - reduce calls per second or upgrade your account at quicknode.com', 'trouble'],
  ['Ankr', -32000, 'Too many requests, reason: call rate limit exhausted, retry in 10s', 'trouble'],
  ['dRPC', -32000, 'Timeout on upstream', 'trouble'],
  ['geth, lagging', -32000, 'header not found', 'trouble'],
  ['geth, pruned', -32000, 'missing trie node 1d6d0f7c2b3 (path ) state 0x1d6d… is not available', 'trouble'],
  ['besu', -32000, 'World state unavailable', 'trouble'],
  ['geth, history expired (EIP-4444)', 4444, 'pruned history unavailable', 'trouble'],
  ['nethermind, history expired', 4444, 'Pruned history unavailable', 'trouble'],
  ['reth, lagging', -32001, 'unknown block', 'trouble'],
  ['a method the provider does not serve', -32601, 'the method debug_traceTransaction does not exist/is not available', 'refusal'],
  ['geth revert', 3, 'execution reverted: RateLimiter: rate limit exceeded', 'answer'],
  ['geth -32000 nonce', -32000, 'nonce too low', 'answer'],
  ['geth invalid params', -32602, 'invalid argument 0: hex string without 0x prefix', 'answer'],
  ['geth trace', -32000, 'genesis is not traceable', 'answer'],
  ['geth tx not found', -32000, 'transaction not found', 'answer'],
  ['a reversed range', -32602, 'invalid block range params', 'answer'],
];
for (const [who, code, message, kind] of cases) {
  test(`should read ${who}'s ${code} "${message.slice(0, 30)}" as ${kind === 'answer' ? "the node's answer" : kind}`, (t) => {
    t.is(errorKind(code, message)?.kind ?? 'answer', kind);
  });
}
