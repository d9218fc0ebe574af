/**
 * The mainnet data the method table's examples use (the Postman collection, lib/ops/collection.ts):
 * the first Ethereum transaction (block 46147 = 0xb443), WETH, USDC and vitalik.eth. Block-pinned
 * examples use block 0x1312d00 (20,000,000), so they are confirmable (a hex block, not "latest").
 * Pure constants.
 */
export const BLOCK = '0x1312d00'; // 20,000,000
export const FIRST_TX = '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060';
export const FIRST_TX_BLOCK = '0xb443'; // 46147
export const FIRST_TX_BLOCK_HASH = '0x4e3a3754410177e6937ef1f84bba68ea139e8d1a2258c5f85db9f1cd715a1bdd';
export const WETH = '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2';
export const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
export const VITALIK = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';
/** USDC.balanceOf(vitalik.eth). */
export const BALANCE_OF = { to: USDC, data: `0x70a08231${VITALIK.slice(2).toLowerCase().padStart(64, '0')}` };
/** keccak256("Transfer(address,address,uint256)"). */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
export const FILTER_ID = '0x9cef478923ff08bf67fde6c64013158d';
/** WETH.deposit() with value 0, chain 1, nonce 0, signed by the public anvil/hardhat test key #0. */
export const RAW_TX =
  '0x02f86f0180843b9aca008506fc23ac0082c35094c02aaa39b223fe8d0a0e5c4f27ead9083c756cc28084d0e30db0c001a0da344fb56a478090f5ab434db4fe6797b5c1d76d6c223d346392d55c34084e8fa04b0eff816bd20109fa01f5deb5f67fe3a860cabc686591258e91f3c26ffde4fd';
export const FILTER_NOTE = 'Filter state lives on one node, so a follow-up call may reach an upstream that does not know the id.';
