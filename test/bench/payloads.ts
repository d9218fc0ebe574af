/**
 * The requests the bench sends and the answers its fake upstreams give, shared by the parent
 * (load, checks, the canonicalize timing) and the upstream child.
 */
import { log } from '../support/fake-upstream.js';

export const BALANCE_ADDRESS = '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2';
export const PINNED_BLOCK = '0x1312d00';
export const LOG_COUNT = 5000;
/** Target size of the eth_getLogs reply, bytes. */
export const LOGS_REPLY_BYTES = 2_500_000;

export const requests = {
  blockNumber: { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
  getBalance: { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [BALANCE_ADDRESS, PINNED_BLOCK] },
  getLogs: {
    jsonrpc: '2.0', id: 1, method: 'eth_getLogs',
    params: [{ address: '0x5523d3c98809dddb82c686e152f5c58b1b0fb59e', fromBlock: PINNED_BLOCK, toBlock: '0x1312e00' }],
  },
} as const;

/** The `result` JSON text each method answers (the id is spliced in per request). */
export function resultJson(method: string, chainId: number): string {
  switch (method) {
    case 'eth_chainId':
      return JSON.stringify(`0x${chainId.toString(16)}`);
    case 'eth_blockNumber':
      // At the getLogs range's toBlock: a node below it would answer a cut list, and N=3 logs
      // are voted on only by upstreams whose head has reached toBlock.
      return '"0x1312e00"';
    case 'eth_getBalance':
      return '"0xde0b6b3a7640000"';
    case 'eth_getTransactionCount':
      return '"0x2a"';
    case 'eth_getLogs':
      return logsResultJson();
    case 'eth_getBlockByNumber':
      // Every tag's block, `finalized` included: PINNED_BLOCK is final, so a confirmed read there
      // may be cached (the `cache` part; the other parts run with the cache off).
      return JSON.stringify({ number: PINNED_BLOCK, hash: `0x${'ab'.repeat(32)}`, parentHash: `0x${'cd'.repeat(32)}`, timestamp: '0x6553f100', transactions: [] });
    default:
      return 'null';
  }
}

let logsCache: string | undefined;

/** The logs of a small range (3 logs, about 1 KB): the `eth_getLogs` answer of an upstream started with `smallLogs`. */
export function smallLogsResultJson(): string {
  return JSON.stringify([1, 2, 3].map((i) => log(i)));
}

/**
 * 5,000 logs whose reply (with the JSON-RPC envelope) is 2.5 MB: the logs of the fake upstream
 * with one topic, their `data` padded so the reply reaches the size (about 500 bytes a log).
 */
export function logsResultJson(): string {
  if (logsCache) return logsCache;
  const base = Array.from({ length: LOG_COUNT }, (_, i) => ({ ...log(i + 1), topics: log(i + 1).topics.slice(0, 1), data: '0x' }));
  const envelope = '{"jsonrpc":"2.0","id":1,"result":}'.length;
  const spare = LOGS_REPLY_BYTES - envelope - JSON.stringify(base).length;
  if (spare < 0) throw new Error('logs without data are already over the target size');
  const perLog = Math.floor(spare / LOG_COUNT / 2) * 2;
  let extra = spare - perLog * LOG_COUNT; // spread what is left, 2 hex digits at a time
  const logs = base.map((l, i) => {
    const more = extra >= 2 ? 2 : 0;
    extra -= more;
    const digits = perLog + more;
    const word = (i + 1).toString(16).padStart(64, '0');
    return { ...l, data: `0x${word.repeat(Math.ceil(digits / 64)).slice(0, digits)}` };
  });
  logsCache = JSON.stringify(logs);
  return logsCache;
}

/** The whole reply an upstream gives to a request with id 1. */
export function replyText(method: string, chainId: number, id: unknown = 1): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson(method, chainId)}}`;
}
