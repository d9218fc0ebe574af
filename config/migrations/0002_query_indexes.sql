-- Indexes the API's queries need: joins on "transactionId", keyset pages ordered by
-- ("blockTimestamp", "transactionId"), proof/dispute "later" checks on ("transactionId",
-- "blockNumber"), and the origin-transaction-hash lookup. Ponder only declares the primary key.
-- A relation that is a view (Ponder publishing its tables into public as views) cannot be
-- indexed: it is skipped with a NOTICE; index the underlying tables in Ponder's schema instead.

CREATE FUNCTION pg_temp.omnigate_is_table(name text) RETURNS boolean LANGUAGE sql AS $$
  SELECT coalesce((SELECT c.relkind IN ('r', 'p') FROM pg_class c WHERE c.oid = to_regclass(quote_ident(name))), false)
$$;

DO $$
BEGIN
  IF pg_temp.omnigate_is_table('BridgeRequestEvents') THEN
    CREATE INDEX IF NOT EXISTS "omnigate_request_tx_id" ON "BridgeRequestEvents" ("transactionId");
    CREATE INDEX IF NOT EXISTS "omnigate_request_tx_hash" ON "BridgeRequestEvents" ("transactionHash");
    CREATE INDEX IF NOT EXISTS "omnigate_request_time" ON "BridgeRequestEvents" ("blockTimestamp", "transactionId");
  ELSE
    RAISE NOTICE 'omnigate: "BridgeRequestEvents" is not a table; indexes skipped';
  END IF;

  IF pg_temp.omnigate_is_table('BridgeRelayedEvents') THEN
    CREATE INDEX IF NOT EXISTS "omnigate_relay_tx_id" ON "BridgeRelayedEvents" ("transactionId");
    CREATE INDEX IF NOT EXISTS "omnigate_relay_time" ON "BridgeRelayedEvents" ("blockTimestamp", "transactionId");
  ELSE
    RAISE NOTICE 'omnigate: "BridgeRelayedEvents" is not a table; indexes skipped';
  END IF;

  IF pg_temp.omnigate_is_table('BridgeProofProvidedEvents') THEN
    CREATE INDEX IF NOT EXISTS "omnigate_proof_tx_block" ON "BridgeProofProvidedEvents" ("transactionId", "blockNumber");
    CREATE INDEX IF NOT EXISTS "omnigate_proof_time" ON "BridgeProofProvidedEvents" ("blockTimestamp", "transactionId");
  ELSE
    RAISE NOTICE 'omnigate: "BridgeProofProvidedEvents" is not a table; indexes skipped';
  END IF;

  IF pg_temp.omnigate_is_table('BridgeProofDisputedEvents') THEN
    CREATE INDEX IF NOT EXISTS "omnigate_dispute_tx_block" ON "BridgeProofDisputedEvents" ("transactionId", "blockNumber");
    CREATE INDEX IF NOT EXISTS "omnigate_dispute_time" ON "BridgeProofDisputedEvents" ("blockTimestamp", "transactionId");
  ELSE
    RAISE NOTICE 'omnigate: "BridgeProofDisputedEvents" is not a table; indexes skipped';
  END IF;

  IF pg_temp.omnigate_is_table('BridgeDepositClaimedEvents') THEN
    CREATE INDEX IF NOT EXISTS "omnigate_claim_tx_id" ON "BridgeDepositClaimedEvents" ("transactionId");
  ELSE
    RAISE NOTICE 'omnigate: "BridgeDepositClaimedEvents" is not a table; indexes skipped';
  END IF;

  IF pg_temp.omnigate_is_table('BridgeDepositRefundedEvents') THEN
    CREATE INDEX IF NOT EXISTS "omnigate_refund_tx_id" ON "BridgeDepositRefundedEvents" ("transactionId");
    CREATE INDEX IF NOT EXISTS "omnigate_refund_time" ON "BridgeDepositRefundedEvents" ("blockTimestamp", "transactionId");
  ELSE
    RAISE NOTICE 'omnigate: "BridgeDepositRefundedEvents" is not a table; indexes skipped';
  END IF;
END
$$;

DROP FUNCTION pg_temp.omnigate_is_table(text);
