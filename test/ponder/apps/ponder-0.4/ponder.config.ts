// The RFQ indexer's configuration for Ponder 0.4 (@ponder/core), pointed at the two anvil chains
// that test/ponder/regenerate.ts starts. Written for the fixture script, after the shape of the
// reference indexer (one FastBridgeV2 contract on several networks, Postgres from DATABASE_URL).
import { readFileSync } from 'node:fs';
import { createConfig } from '@ponder/core';
import { http } from 'viem';

const abi = JSON.parse(readFileSync('abi.json', 'utf8'));
const address = process.env.FASTBRIDGE_ADDRESS as `0x${string}`;

export default createConfig({
  database: { kind: 'postgres', connectionString: process.env.DATABASE_URL },
  networks: {
    arbitrum: { chainId: 42161, transport: http(process.env.ARBITRUM_RPC), pollingInterval: 250 },
    base: { chainId: 8453, transport: http(process.env.BASE_RPC), pollingInterval: 250 },
  },
  contracts: {
    FastBridgeV2: {
      abi,
      network: {
        arbitrum: { address, startBlock: Number(process.env.ARBITRUM_START_BLOCK) },
        base: { address, startBlock: Number(process.env.BASE_START_BLOCK) },
      },
    },
  },
});
