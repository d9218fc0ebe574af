/**
 * The compiled FastBridgeV2 and MockERC20 artifacts, kept in the repository under
 * test/fixtures/fastbridge/ (see its README.md for where they come from), and helpers to deploy them.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createPublicClient, createWalletClient, http, type Abi, type Account, type Address, type Hex } from 'viem';
import { urlFromRoot } from './paths.js';

const FIXTURES = urlFromRoot('test/fixtures/fastbridge/');

/** A compiled artifact of test/fixtures/fastbridge/ (`FastBridgeV2`, `MockERC20`). */
export function fastBridgeArtifact(name: 'FastBridgeV2' | 'MockERC20'): { abi: Abi; bytecode: Hex } {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`${name}.json`, FIXTURES)), 'utf8')) as { abi: Abi; bytecode: Hex };
}

/** Deploys FastBridgeV2 on a node with `admin` as its default admin; resolves to its address once mined. */
export async function deployFastBridge(url: string, admin: Account): Promise<Address> {
  const { abi, bytecode } = fastBridgeArtifact('FastBridgeV2');
  const client = createPublicClient({ transport: http(url), pollingInterval: 50 });
  const wallet = createWalletClient({ account: admin, transport: http(url) });
  const hash = await wallet.deployContract({ abi, bytecode, args: [admin.address], chain: null });
  const receipt = await client.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`FastBridgeV2 deployment failed on ${url}`);
  return receipt.contractAddress;
}
