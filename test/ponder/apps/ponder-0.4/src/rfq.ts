// What the RFQ handlers derive from an event: chain names by id and amounts formatted by token
// (18 decimals for native ETH, 6 for every other token, as the reference indexer does).
import { formatUnits, trim } from 'viem';

const NAMES: Record<number, string> = {
  1: 'ethereum', 10: 'optimism', 42161: 'arbitrum', 8453: 'base', 81457: 'blast', 534352: 'scroll', 59144: 'linea',
  56: 'bnb', 480: 'worldchain', 130: 'unichain', 80094: 'berachain', 999: 'hyperevm',
};
export const chainName = (id: number) => NAMES[id] ?? 'unknown';

const EIGHTEEN = new Set(['0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee']);
export const formatAmount = (amount: bigint, token: string) => formatUnits(amount, EIGHTEEN.has(token.toLowerCase()) ? 18 : 6);
export const addr = (a: string) => trim(a as `0x${string}`);
