-- The six tables the Ponder 0.4 indexer writes (reference §2.1), with Ponder's physical types:
-- string → text, int → integer, bigint → numeric(78,0), boolean → integer (0/1), id → primary key,
-- non-optional → NOT NULL, quoted case-sensitive names. IF NOT EXISTS leaves an existing index
-- (tables or views written by Ponder) untouched, so DATABASE_URL can point at a live index.

CREATE TABLE IF NOT EXISTS "BridgeRequestEvents" (
  "id" text PRIMARY KEY,
  "transactionId" text NOT NULL,
  "sender" text NOT NULL,
  "request" text NOT NULL,
  "originToken" text NOT NULL,
  "destToken" text NOT NULL,
  "originAmount" numeric(78, 0),
  "originAmountFormatted" text NOT NULL,
  "destAmount" numeric(78, 0) NOT NULL,
  "destAmountFormatted" text NOT NULL,
  "originChainId" integer NOT NULL,
  "originChain" text NOT NULL,
  "destChainId" integer NOT NULL,
  "destChain" text NOT NULL,
  "sendChainGas" integer NOT NULL,
  "blockNumber" numeric(78, 0) NOT NULL,
  "blockTimestamp" integer NOT NULL,
  "transactionHash" text NOT NULL
);

CREATE TABLE IF NOT EXISTS "BridgeRelayedEvents" (
  "id" text PRIMARY KEY,
  "transactionId" text NOT NULL,
  "relayer" text NOT NULL,
  "to" text NOT NULL,
  "originToken" text NOT NULL,
  "destToken" text NOT NULL,
  "originAmount" numeric(78, 0) NOT NULL,
  "originAmountFormatted" text NOT NULL,
  "destAmount" numeric(78, 0) NOT NULL,
  "destAmountFormatted" text NOT NULL,
  "originChainId" integer NOT NULL,
  "originChain" text NOT NULL,
  "destChainId" integer NOT NULL,
  "destChain" text NOT NULL,
  "blockNumber" numeric(78, 0) NOT NULL,
  "blockTimestamp" integer NOT NULL,
  "transactionHash" text NOT NULL
);

CREATE TABLE IF NOT EXISTS "BridgeProofProvidedEvents" (
  "id" text PRIMARY KEY,
  "transactionId" text NOT NULL,
  "relayer" text NOT NULL,
  "originChainId" integer NOT NULL,
  "originChain" text NOT NULL,
  "blockNumber" numeric(78, 0) NOT NULL,
  "blockTimestamp" integer NOT NULL,
  "transactionHash" text NOT NULL
);

CREATE TABLE IF NOT EXISTS "BridgeDepositRefundedEvents" (
  "id" text PRIMARY KEY,
  "transactionId" text NOT NULL,
  "to" text NOT NULL,
  "token" text NOT NULL,
  "amount" numeric(78, 0) NOT NULL,
  "amountFormatted" text NOT NULL,
  "originChainId" integer NOT NULL,
  "originChain" text NOT NULL,
  "blockNumber" numeric(78, 0) NOT NULL,
  "blockTimestamp" integer NOT NULL,
  "transactionHash" text NOT NULL
);

CREATE TABLE IF NOT EXISTS "BridgeDepositClaimedEvents" (
  "id" text PRIMARY KEY,
  "transactionId" text NOT NULL,
  "relayer" text NOT NULL,
  "to" text NOT NULL,
  "token" text NOT NULL,
  "amount" numeric(78, 0) NOT NULL,
  "amountFormatted" text NOT NULL,
  "originChainId" integer NOT NULL,
  "originChain" text NOT NULL,
  "blockNumber" numeric(78, 0) NOT NULL,
  "blockTimestamp" integer NOT NULL,
  "transactionHash" text NOT NULL
);

CREATE TABLE IF NOT EXISTS "BridgeProofDisputedEvents" (
  "id" text PRIMARY KEY,
  "transactionId" text NOT NULL,
  "relayer" text NOT NULL,
  "originChainId" integer NOT NULL,
  "originChain" text NOT NULL,
  "blockNumber" numeric(78, 0) NOT NULL,
  "blockTimestamp" integer NOT NULL,
  "transactionHash" text NOT NULL
);
