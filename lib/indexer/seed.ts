/**
 * A realistic demo dataset, so a new user can try every query: `count` bridges across the 12
 * chains of the indexer, in every state the API distinguishes (lib/indexer/README.md), with timestamps
 * relative to `now` (so "missing relay within 7 days" has rows), block numbers that fit each
 * chain's block time, real token addresses and decimals, and an ABI-encoded `request`.
 * `generateDemo` is pure and deterministic for a given seed; `seedDemo` inserts its rows.
 */
import { CHAINS, blockAt, type ChainInfo } from './chains.js';
import { bound, SqlBuilder, type IndexerDb } from './db/pool.js';

export const DEMO_STATES = [
  'requested', // waiting for a relay, recent, within its deadline → missing-relay
  'expired', // never relayed, older than 7 days → exceed-deadline
  'relayed', // relayed, not proven → missing-proof
  'proven', // proven, not claimed → missing-claim
  'provenDisputed', // proven then disputed → missing-proof, disputes
  'disputedReproven', // disputed then proven again → missing-claim
  'claimed', // final
  'refunded', // final, never relayed
  'refundedRelayed', // relayed and refunded → refunded-and-relayed
  'conflictingProof', // proven by another relayer → conflicting-proofs, missing-claim
  'relayWithoutRequest', // → invalid-relays
] as const;
export type DemoState = (typeof DEMO_STATES)[number];

/** Share of each state among generated bridges (percent). */
const WEIGHTS: Record<DemoState, number> = {
  requested: 8, expired: 5, relayed: 8, proven: 8, provenDisputed: 4, disputedReproven: 4,
  claimed: 45, refunded: 6, refundedRelayed: 3, conflictingProof: 4, relayWithoutRequest: 5,
};

export type DemoRow = Record<string, string | number | null>;

export interface DemoData {
  requests: DemoRow[];
  relays: DemoRow[];
  proofs: DemoRow[];
  disputes: DemoRow[];
  claims: DemoRow[];
  refunds: DemoRow[];
  /** transactionId → the state it was generated in. */
  states: Map<string, DemoState>;
}

const RELAYERS = [
  '0xdd2f8e8c1c2c8a0c1f3b0e3d4f2d8bd4f1d2c3a1', '0x4e3c5b2f0c6a7d8e9f0a1b2c3d4e5f6a7b8c9d0e',
  '0x1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d', '0x9f8e7d6c5b4a39281706f5e4d3c2b1a098765432',
  '0x5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d',
];
const GUARD = '0x7a3f0c9e2b1d4c5a6e8f9b0a1c2d3e4f5a6b7c8d';

/** mulberry32: tiny, fast, good enough for demo data, and reproducible. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Formats an integer amount of smallest units as a decimal string (viem formatUnits style). */
export function formatUnits(value: bigint, decimals: number): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  const fraction = (abs % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

const word = (hex: string) => hex.replace(/^0x/, '').padStart(64, '0');

export function generateDemo(options: { count: number; now?: number; seed?: number }): DemoData {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const rand = prng(options.seed ?? 20240804);
  const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
  const hex = (bytes: number) => {
    let s = '0x';
    for (let i = 0; i < bytes; i += 1) s += Math.floor(rand() * 256).toString(16).padStart(2, '0');
    return s;
  };
  const HOUR = 3600;
  const DAY = 24 * HOUR;
  const total = Object.values(WEIGHTS).reduce((a, b) => a + b, 0);
  const weighted = (): DemoState => {
    let x = rand() * total;
    for (const state of DEMO_STATES) {
      x -= WEIGHTS[state];
      if (x < 0) return state;
    }
    return 'claimed';
  };

  const data: DemoData = { requests: [], relays: [], proofs: [], disputes: [], claims: [], refunds: [], states: new Map() };
  for (let i = 0; i < options.count; i += 1) {
    // The first bridges walk through every state so even a small dataset shows each one.
    const state = i < DEMO_STATES.length ? DEMO_STATES[i]! : weighted();
    const origin: ChainInfo = pick(CHAINS);
    let dest: ChainInfo = pick(CHAINS);
    while (dest.id === origin.id) dest = pick(CHAINS);
    const asset = rand() < 0.7 ? 'usd' : 'eth';
    const originToken = origin[asset];
    const destToken = dest[asset];
    const human = asset === 'usd' ? Math.exp(Math.log(10) + rand() * Math.log(5000)) : Math.exp(Math.log(0.01) + rand() * Math.log(2000));
    const originAmount = BigInt(Math.round(human * 1e6)) * 10n ** BigInt(originToken.decimals - 6);
    const feeBps = BigInt(between(3, 20));
    const destScaled = (originAmount * (10000n - feeBps)) / 10000n;
    const destAmount = (destScaled * 10n ** BigInt(destToken.decimals)) / 10n ** BigInt(originToken.decimals);
    const transactionId = hex(32);
    const sender = hex(20);
    const relayer = pick(RELAYERS);
    const sendChainGas = rand() < 0.1 ? 1 : 0;

    const pending = ['requested', 'relayed', 'proven', 'provenDisputed', 'disputedReproven', 'conflictingProof'].includes(state);
    const requestTs = state === 'requested' ? now - between(60, 6 * DAY)
      : state === 'expired' ? now - between(8 * DAY, 40 * DAY)
        : state === 'refunded' || state === 'refundedRelayed' ? now - between(9 * DAY, 45 * DAY)
          : state === 'relayWithoutRequest' ? now - between(HOUR, 13 * DAY)
            : pending ? now - between(3 * HOUR, 2 * DAY)
              : now - between(4 * HOUR, 45 * DAY);
    // Still waiting for a relay: within its deadline (past it, it would be exceed-deadline).
    const deadline = requestTs + (state === 'requested' ? 7 * DAY : HOUR);
    const nonce = BigInt(between(1, 900000));
    const request = `0x${[
      BigInt(origin.id).toString(16), BigInt(dest.id).toString(16), sender, sender, originToken.address, destToken.address,
      originAmount.toString(16), destAmount.toString(16), ((originAmount * 1n) / 10000n).toString(16),
      sendChainGas.toString(16), BigInt(deadline).toString(16), nonce.toString(16),
    ].map(word).join('')}`;

    const onOrigin = (ts: number) => ({
      originChainId: origin.id, originChain: origin.name,
      blockNumber: blockAt(origin, ts).toString(), blockTimestamp: ts, transactionHash: hex(32),
    });
    if (state !== 'relayWithoutRequest') {
      const requestHash = hex(32);
      data.requests.push({
        id: transactionId, transactionId, sender, request,
        originToken: originToken.address, destToken: destToken.address,
        originAmount: originAmount.toString(), originAmountFormatted: formatUnits(originAmount, originToken.decimals),
        destAmount: destAmount.toString(), destAmountFormatted: formatUnits(destAmount, destToken.decimals),
        originChainId: origin.id, originChain: origin.name, destChainId: dest.id, destChain: dest.name,
        sendChainGas, blockNumber: blockAt(origin, requestTs).toString(), blockTimestamp: requestTs, transactionHash: requestHash,
      });
    }
    data.states.set(transactionId, state);
    if (state === 'requested' || state === 'expired') continue;

    if (state === 'refunded') {
      const ts = requestTs + 7 * DAY + between(60, 12 * HOUR);
      data.refunds.push({
        id: transactionId, transactionId, to: sender, token: originToken.address, amount: originAmount.toString(),
        amountFormatted: formatUnits(originAmount, originToken.decimals), ...onOrigin(ts),
      });
      continue;
    }

    const relayTs = requestTs + between(5, 180);
    data.relays.push({
      id: transactionId, transactionId, relayer, to: sender,
      originToken: originToken.address, destToken: destToken.address,
      originAmount: originAmount.toString(), originAmountFormatted: formatUnits(originAmount, originToken.decimals),
      destAmount: destAmount.toString(), destAmountFormatted: formatUnits(destAmount, destToken.decimals),
      originChainId: origin.id, originChain: origin.name, destChainId: dest.id, destChain: dest.name,
      blockNumber: blockAt(dest, relayTs).toString(), blockTimestamp: relayTs, transactionHash: hex(32),
    });
    if (state === 'relayed' || state === 'relayWithoutRequest') continue;
    if (state === 'refundedRelayed') {
      const ts = requestTs + 7 * DAY + between(60, DAY);
      data.refunds.push({
        id: transactionId, transactionId, to: sender, token: originToken.address, amount: originAmount.toString(),
        amountFormatted: formatUnits(originAmount, originToken.decimals), ...onOrigin(Math.min(ts, now - 60)),
      });
      continue;
    }

    let proofTs = relayTs + between(5 * 60, 40 * 60);
    let prover = state === 'conflictingProof' ? pick(RELAYERS.filter((r) => r !== relayer)) : relayer;
    if (state === 'provenDisputed' || state === 'disputedReproven') {
      const disputeTs = proofTs + between(60, 25 * 60);
      data.disputes.push({ id: transactionId, transactionId, relayer: GUARD, ...onOrigin(disputeTs) });
      if (state === 'disputedReproven') {
        proofTs = disputeTs + between(10 * 60, 60 * 60);
        prover = relayer;
      } else {
        // The proof row must be the earlier one: the dispute voids it.
        data.proofs.push({ id: transactionId, transactionId, relayer: prover, ...onOrigin(proofTs) });
        continue;
      }
    }
    data.proofs.push({ id: transactionId, transactionId, relayer: prover, ...onOrigin(proofTs) });
    if (state !== 'claimed') continue;
    const claimTs = Math.min(proofTs + between(31 * 60, 2 * HOUR), now - 1);
    data.claims.push({
      id: transactionId, transactionId, relayer, to: relayer, token: originToken.address, amount: originAmount.toString(),
      amountFormatted: formatUnits(originAmount, originToken.decimals), ...onOrigin(Math.max(claimTs, proofTs + 1)),
    });
  }
  return data;
}

const TABLES: [keyof Omit<DemoData, 'states'>, string][] = [
  ['requests', 'BridgeRequestEvents'], ['relays', 'BridgeRelayedEvents'], ['proofs', 'BridgeProofProvidedEvents'],
  ['disputes', 'BridgeProofDisputedEvents'], ['claims', 'BridgeDepositClaimedEvents'], ['refunds', 'BridgeDepositRefundedEvents'],
];

/**
 * Inserts rows into one of the six tables (names are constants, values are bound parameters).
 * `inserted` is told how many rows each statement added.
 */
export async function insertRows(db: Pick<IndexerDb, 'none'>, table: string, rows: readonly DemoRow[], inserted?: (rows: number) => void): Promise<void> {
  const first = rows[0];
  if (!first) return;
  const columns = Object.keys(first);
  const perStatement = Math.floor(30000 / columns.length);
  for (let i = 0; i < rows.length; i += perStatement) {
    const s = new SqlBuilder();
    const tuples = rows.slice(i, i + perStatement).map((row) => `(${columns.map((c) => s.param(row[c] ?? null)).join(', ')})`);
    await db.none(bound(s.statement(`INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES ${tuples.join(', ')}`)));
    inserted?.(tuples.length);
  }
}

export interface SeedOptions {
  count: number;
  now?: number;
  seed?: number;
  /** Told the rows inserted so far (all six tables) and the total, after each statement. */
  onProgress?: (done: number, total: number) => void;
}

/** Generates `count` demo bridges and inserts them in one transaction; returns how many. */
export async function seedDemo(db: IndexerDb, options: SeedOptions): Promise<number> {
  if (!Number.isInteger(options.count) || options.count < 1) throw new Error('count must be a positive integer');
  const data = generateDemo({ ...options, seed: options.seed ?? Math.floor(Math.random() * 2 ** 31) });
  const total = TABLES.reduce((n, [key]) => n + data[key].length, 0);
  let done = 0;
  const inserted = (rows: number) => {
    done += rows;
    options.onProgress?.(done, total);
  };
  await insertEvents(db, data, inserted);
  return data.states.size;
}

/** The rows of the six event tables, by table. */
export type EventRows = Omit<DemoData, 'states'>;

/** Inserts the rows of the six tables in one transaction; `inserted` as for insertRows. */
export async function insertEvents(db: IndexerDb, rows: EventRows, inserted?: (rows: number) => void): Promise<void> {
  await db.tx('omnigate-insert-events', async (t) => {
    for (const [key, table] of TABLES) await insertRows(t, table, rows[key], inserted);
  });
}
