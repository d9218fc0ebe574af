/**
 * The 12 networks the Ponder indexer watches (lib/indexer/README.md), with what the demo seeder needs to
 * make plausible rows: the FastBridge contract, the indexer's start block and an average block
 * time, so a timestamp maps to a believable block number on that chain.
 */
export interface ChainInfo {
  readonly id: number;
  /** The name `getChainName(id)` writes into `originChain`/`destChain`. */
  readonly name: string;
  readonly fastBridge: string;
  readonly startBlock: number;
  /** Seconds per block, averaged; only used to invent block numbers for demo data. */
  readonly blockTime: number;
  /** USDC (or the chain's main dollar token) and its decimals. */
  readonly usd: { readonly address: string; readonly decimals: number };
  /** ETH as the bridge sees it: the native placeholder, or the chain's bridged ETH token. */
  readonly eth: { readonly address: string; readonly decimals: number };
}

/** Unix time the indexer start blocks correspond to (2024-08-04T00:00:00Z). */
export const INDEX_START_TIME = 1722729600;

const NATIVE = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
const nativeEth = { address: NATIVE, decimals: 18 } as const;

export const CHAINS: readonly ChainInfo[] = [
  { id: 1, name: 'ethereum', fastBridge: '0x5523d3c98809dddb82c686e152f5c58b1b0fb59e', startBlock: 20426589, blockTime: 12,
    usd: { address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', decimals: 6 }, eth: nativeEth },
  { id: 10, name: 'optimism', fastBridge: '0x5523d3c98809dddb82c686e152f5c58b1b0fb59e', startBlock: 123416470, blockTime: 2,
    usd: { address: '0x0b2c639c533813f4aa9d7837caf62653d097ff85', decimals: 6 }, eth: nativeEth },
  { id: 42161, name: 'arbitrum', fastBridge: '0x5523d3c98809dddb82c686e152f5c58b1b0fb59e', startBlock: 237979967, blockTime: 0.25,
    usd: { address: '0xaf88d065e77c8cc2239327c5edb3a432268e5831', decimals: 6 }, eth: nativeEth },
  { id: 8453, name: 'base', fastBridge: '0x5523d3c98809dddb82c686e152f5c58b1b0fb59e', startBlock: 17821292, blockTime: 2,
    usd: { address: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913', decimals: 6 }, eth: nativeEth },
  { id: 81457, name: 'blast', fastBridge: '0x34f52752975222d5994c206ce08c1d5b329f24dd', startBlock: 6811045, blockTime: 2,
    usd: { address: '0x4300000000000000000000000000000000000003', decimals: 18 }, eth: nativeEth },
  { id: 534352, name: 'scroll', fastBridge: '0x5523d3c98809dddb82c686e152f5c58b1b0fb59e', startBlock: 7941653, blockTime: 3,
    usd: { address: '0x06efdbff2a14a7c8e15944d1f4a48f9f95f663a4', decimals: 6 }, eth: nativeEth },
  { id: 59144, name: 'linea', fastBridge: '0x34f52752975222d5994c206ce08c1d5b329f24dd', startBlock: 7124666, blockTime: 2,
    usd: { address: '0x176211869ca2b568f2a7d4ee941e073a821ee1ff', decimals: 6 }, eth: nativeEth },
  { id: 56, name: 'bnb', fastBridge: '0x5523d3c98809dddb82c686e152f5c58b1b0fb59e', startBlock: 40497843, blockTime: 3,
    usd: { address: '0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d', decimals: 18 },
    eth: { address: '0x2170ed0880ac9a755fd29b2688956bd959f933f8', decimals: 18 } },
  { id: 480, name: 'worldchain', fastBridge: '0x05c62156c7c47e76223a560210ea648de5e6b53b', startBlock: 4598830, blockTime: 2,
    usd: { address: '0x79a02482a880bce3f13e09da970dc34db4cd24d1', decimals: 6 }, eth: nativeEth },
  { id: 130, name: 'unichain', fastBridge: '0x63c3211257cce0c12c7c7a6dbb75960feabf45be', startBlock: 8435535, blockTime: 1,
    usd: { address: '0x078d782b760474a361dda0af3839290b0ef57ad6', decimals: 6 }, eth: nativeEth },
  { id: 80094, name: 'berachain', fastBridge: '0x63c3211257cce0c12c7c7a6dbb75960feabf45be', startBlock: 953594, blockTime: 2,
    usd: { address: '0x549943e04f40284185054145c6e4e9568c1d3241', decimals: 6 },
    eth: { address: '0x2f6f07cdcf3588944bf4c42ac74ff24bf56e7590', decimals: 18 } },
  { id: 999, name: 'hyperevm', fastBridge: '0x63c3211257cce0c12c7c7a6dbb75960feabf45be', startBlock: 698460, blockTime: 1,
    usd: { address: '0xb8ce59fc3717ada4c02eadf9682a9e934f625ebb', decimals: 6 },
    eth: { address: '0xbe6727b535545c67d5caa73dea54865b92cf7907', decimals: 18 } },
];

const byId = new Map(CHAINS.map((c) => [c.id, c]));

/** Same mapping as the indexer's `getChainName`: unknown ids are `'unknown'`. */
export function chainName(id: number): string {
  return byId.get(id)?.name ?? 'unknown';
}

export function chainById(id: number): ChainInfo | undefined {
  return byId.get(id);
}

/** A plausible block number for a timestamp on a chain (demo data only). */
export function blockAt(chain: ChainInfo, timestamp: number): bigint {
  const elapsed = Math.max(0, timestamp - INDEX_START_TIME);
  return BigInt(chain.startBlock) + BigInt(Math.floor(elapsed / chain.blockTime));
}
