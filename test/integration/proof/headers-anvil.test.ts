/**
 * Header hashes recomputed from real anvil blocks of every header layout anvil can mine
 * (`--hardfork berlin`: the original fifteen fields; london, shanghai, cancun, prague: each fork's
 * appended fields), and a range proven down to genesis from the top header.
 */
import test from 'ava';
import { checkHeader, checkHeaderChain, headerHash, headerLayout, type BlockJson, type HeaderLayout } from '../../../lib/proof/header.js';
import { stopAllAnvils } from '../../support/anvil.js';
import { proofChain, type Fork, type ProofChain } from '../../support/proof-chain.js';

const layouts: Record<Fork, HeaderLayout> = { berlin: 'frontier', london: 'london', shanghai: 'shanghai', cancun: 'cancun', prague: 'prague' };
/** anvil writes (and hashes) blobGasUsed and excessBlobGas in a genesis before Shanghai, without withdrawalsRoot. */
const genesisLayouts: Record<Fork, HeaderLayout> = { berlin: 'gapped', london: 'gapped', shanghai: 'shanghai', cancun: 'cancun', prague: 'prague' };
const chains = new Map<Fork, ProofChain>();

test.before(async () => {
  for (const fork of Object.keys(layouts) as Fork[]) chains.set(fork, await proofChain(fork));
});
test.after.always(stopAllAnvils);

for (const fork of Object.keys(layouts) as Fork[]) {
  test(`${fork}: every block's hash is the keccak of its fields, layout ${layouts[fork]}`, async (t) => {
    const { node, blocks } = chains.get(fork)!;
    const all: BlockJson[] = [];
    for (let n = 0; n <= blocks.empty; n += 1) {
      const full = n % 2 === 0;
      const block = await node.rpc<BlockJson>('eth_getBlockByNumber', [`0x${n.toString(16)}`, full]);
      t.is(headerHash(block), block.hash as string, `block ${n}`);
      all.push(block);
    }
    t.is(headerLayout(all[0]!), genesisLayouts[fork]);
    const top = checkHeader(all.at(-1)!);
    t.is(top.layout, layouts[fork]);
    const below = checkHeaderChain(top, all.slice(0, -1));
    t.is(below.length, blocks.empty);
    t.is(below[0]!.number, 0n);
    const logsHash = all[blocks.logs]!.hash as string;
    const byHash = await node.rpc<BlockJson>('eth_getBlockByHash', [logsHash, true]);
    t.is(checkHeader(byHash, logsHash).number, BigInt(blocks.logs));
  });
}
