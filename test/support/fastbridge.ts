/**
 * Where the compiled FastBridgeV2 artifacts are: `$FASTBRIDGE_FIXTURES`, else the first
 * `shared/fixtures/fastbridge/` found walking up from the repository (the project keeps them
 * next to the checkout, `../shared/fixtures/fastbridge/`, also from a worktree further down).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicClient, createWalletClient, http, type Abi, type Account, type Address, type Hex } from 'viem';

export function fastBridgeFixtures(): string {
  const fromEnv = process.env.FASTBRIDGE_FIXTURES;
  if (fromEnv) return fromEnv;
  let dir = fileURLToPath(new URL('../../', import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'shared', 'fixtures', 'fastbridge');
    if (existsSync(path.join(candidate, 'FastBridgeV2.json'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('FastBridgeV2 fixtures not found: set FASTBRIDGE_FIXTURES to the directory holding FastBridgeV2.json');
    dir = parent;
  }
}

/** A compiled artifact of the fixtures directory (`FastBridgeV2`, `MockERC20`). */
export function fastBridgeArtifact(name: 'FastBridgeV2' | 'MockERC20'): { abi: Abi; bytecode: Hex } {
  return JSON.parse(readFileSync(path.join(fastBridgeFixtures(), `${name}.json`), 'utf8')) as { abi: Abi; bytecode: Hex };
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
