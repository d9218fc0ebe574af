/**
 * JSON-RPC error codes omnigate answers with. The -32700…-32600 range is JSON-RPC 2.0's own; the
 * -32001…-32099 codes are omnigate's (JSON-RPC reserves -32000…-32099 for implementations).
 * -32000 and -32005 are left alone: Ethereum nodes use them (generic server error, limit
 * exceeded), and a client must be able to tell a node's error from the gateway's.
 */
export const RpcCode = {
  /** The body is not valid JSON. */
  ParseError: -32700,
  /** The body is JSON but not a JSON-RPC request (or batch) omnigate can verify. */
  InvalidRequest: -32600,
  /** A method omnigate does not serve (subscriptions: their notifications have no way back over HTTP). */
  MethodNotFound: -32601,
  /** The params do not fit the method (wrong count or type of a parameter omnigate reads). */
  InvalidParams: -32602,
  /** An internal error of omnigate itself (a bug: the log has the cause). */
  InternalError: -32603,
  /** The chain id in the path is not configured. */
  UnknownChain: -32001,
  /** The `<n>` of /confirmations/<n>/ is not a positive decimal integer. */
  InvalidConfirmations: -32002,
  /** More confirmations were asked than the chain has usable upstreams. */
  NotEnoughUpstreams: -32003,
  /** An RPC route was called with a method other than POST. */
  MethodNotAllowed: -32004,
  /** The request body is larger than `limits.bodyBytes`. */
  BodyTooLarge: -32006,
  /** A batch has more members than `limits.batchSize`. */
  BatchTooLarge: -32007,
  /** No route matches the path. */
  RouteNotFound: -32008,
  /** The chain id in the path is not a non-negative decimal integer. */
  InvalidChainId: -32009,
  /** The upstreams answered, but no N of them agreed. */
  NoQuorum: -32010,
  /** Too many upstreams failed (transport error, timeout, HTTP error, bad JSON) to reach N. */
  UpstreamsFailed: -32011,
  /** The request deadline (`timeouts.requestMs`) passed before N upstreams agreed. */
  DeadlineExceeded: -32012,
  /** The upstream answers in flight already hold `limits.bufferedBytes`: try again shortly. */
  UpstreamBudget: -32013,
  /** The request came back to this gateway through one of its own upstreams (a request loop). */
  LoopDetected: -32014,
  /** The pipeline was closed (`rpc.close()`, the server is shutting down): retry on another instance. */
  ShuttingDown: -32015,
  /** The pinned block is not yet available on enough upstreams (their heads are below it): retry shortly. */
  BlockNotAvailable: -32016,
  /** A write reached an upstream that never answered: its outcome is unknown (look the transaction hash up before sending again). */
  WriteOutcomeUnknown: -32017,
  /** No client key, or one the gateway does not know, where `access:` requires one (HTTP 401). */
  Unauthorized: -32018,
  /** The client key (or the anonymous tier) may not use this chain, method or N (HTTP 403). */
  Forbidden: -32019,
  /** The client key (or the anonymous tier) is over its credit budget: per second, per day or requests in flight (HTTP 429, Retry-After). */
  BudgetExceeded: -32020,
  /** Proof mode: no provider's answer proved against the header N providers agreed on (the data says what failed). */
  ProofFailed: -32021,
} as const;

export type RpcCodeValue = (typeof RpcCode)[keyof typeof RpcCode];
