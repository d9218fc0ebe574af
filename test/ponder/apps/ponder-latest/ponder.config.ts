// The RFQ indexer's configuration for the newest Ponder (`ponder` 0.17), pointed at the two anvil
// chains that test/ponder/regenerate.ts starts; the schemas come from `ponder start --schema
// --views-schema`, Postgres from DATABASE_URL.
import { readFileSync } from 'node:fs';
import { createConfig } from 'ponder';

const abi = JSON.parse(readFileSync('abi.json', 'utf8'));
const address = process.env.FASTBRIDGE_ADDRESS as `0x${string}`;

export default createConfig({
  database: { kind: 'postgres', connectionString: process.env.DATABASE_URL },
  chains: {
    arbitrum: { id: 42161, rpc: process.env.ARBITRUM_RPC!, pollingInterval: 250 },
    base: { id: 8453, rpc: process.env.BASE_RPC!, pollingInterval: 250 },
  },
  contracts: {
    FastBridgeV2: {
      abi,
      chain: {
        arbitrum: { address, startBlock: Number(process.env.ARBITRUM_START_BLOCK) },
        base: { address, startBlock: Number(process.env.BASE_START_BLOCK) },
      },
    },
  },
});
