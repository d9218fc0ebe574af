/**
 * The spec's tables, written out again for tests as an oracle independent of lib/ (a test that
 * imported lib/jsonrpc/methods.ts to decide what to expect would agree with any bug there).
 */

/** Where each pinned method carries its block (spec B2); 'filter' = the filter's fromBlock and toBlock. */
export const blockParam: Readonly<Record<string, number | 'filter'>> = {
  eth_getBlockByNumber: 0,
  eth_getBlockTransactionCountByNumber: 0,
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_getTransactionCount: 1,
  eth_call: 1,
  eth_getStorageAt: 2,
  eth_getLogs: 'filter',
};
