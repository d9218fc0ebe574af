-- Btrees on (chain, blockNumber) INCLUDE (blockTimestamp) of each table, for /api/status on
-- Ponder 0.4, which keeps no position per chain: the status is the newest indexed event per chain.
-- Without them that read scanned the six tables (0.6-0.9 s at 1,000,000 events); with them it is
-- a few index probes per chain, about 5 ms (lib/indexer/ops/stats.ts, newestEvents).
-- lib/indexer/db/indexes.ts lists the same indexes, so they come back after an indexer redeploy.
--
-- Like 0002, a relation that is a view is skipped with a NOTICE.

CREATE FUNCTION pg_temp.omnigate_is_table(name text) RETURNS boolean LANGUAGE sql AS $$
  SELECT coalesce((SELECT c.relkind IN ('r', 'p') FROM pg_class c WHERE c.oid = to_regclass(quote_ident(name))), false)
$$;

DO $$
BEGIN
  IF pg_temp.omnigate_is_table('BridgeRequestEvents') THEN
    CREATE INDEX IF NOT EXISTS "omnigate_request_chain_block" ON "BridgeRequestEvents" ("originChainId", "blockNumber") INCLUDE ("blockTimestamp");
  ELSE
    RAISE NOTICE 'omnigate: "BridgeRequestEvents" is not a table; index skipped';
  END IF;
  IF pg_temp.omnigate_is_table('BridgeRelayedEvents') THEN
    CREATE INDEX IF NOT EXISTS "omnigate_relay_chain_block" ON "BridgeRelayedEvents" ("destChainId", "blockNumber") INCLUDE ("blockTimestamp");
  ELSE
    RAISE NOTICE 'omnigate: "BridgeRelayedEvents" is not a table; index skipped';
  END IF;
  IF pg_temp.omnigate_is_table('BridgeProofProvidedEvents') THEN
    CREATE INDEX IF NOT EXISTS "omnigate_proof_chain_block" ON "BridgeProofProvidedEvents" ("originChainId", "blockNumber") INCLUDE ("blockTimestamp");
  ELSE
    RAISE NOTICE 'omnigate: "BridgeProofProvidedEvents" is not a table; index skipped';
  END IF;
  IF pg_temp.omnigate_is_table('BridgeProofDisputedEvents') THEN
    CREATE INDEX IF NOT EXISTS "omnigate_dispute_chain_block" ON "BridgeProofDisputedEvents" ("originChainId", "blockNumber") INCLUDE ("blockTimestamp");
  ELSE
    RAISE NOTICE 'omnigate: "BridgeProofDisputedEvents" is not a table; index skipped';
  END IF;
  IF pg_temp.omnigate_is_table('BridgeDepositClaimedEvents') THEN
    CREATE INDEX IF NOT EXISTS "omnigate_claim_chain_block" ON "BridgeDepositClaimedEvents" ("originChainId", "blockNumber") INCLUDE ("blockTimestamp");
  ELSE
    RAISE NOTICE 'omnigate: "BridgeDepositClaimedEvents" is not a table; index skipped';
  END IF;
  IF pg_temp.omnigate_is_table('BridgeDepositRefundedEvents') THEN
    CREATE INDEX IF NOT EXISTS "omnigate_refund_chain_block" ON "BridgeDepositRefundedEvents" ("originChainId", "blockNumber") INCLUDE ("blockTimestamp");
  ELSE
    RAISE NOTICE 'omnigate: "BridgeDepositRefundedEvents" is not a table; index skipped';
  END IF;
END
$$;

DROP FUNCTION pg_temp.omnigate_is_table(text);
