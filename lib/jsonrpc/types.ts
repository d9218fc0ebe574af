/** A JSON-RPC id as omnigate accepts it: a string or a safe integer. */
export type RpcId = string | number;

/** One validated JSON-RPC call (a batch has several). */
export interface RpcCall {
  readonly id: RpcId;
  readonly method: string;
  /** Always an array: an absent `params` is read as `[]`. */
  readonly params: readonly unknown[];
}

/** The request body, parsed and validated, with the bytes it came from. */
export interface RpcPayload {
  readonly calls: readonly RpcCall[];
  readonly batch: boolean;
  /** The body exactly as the client sent it: this is what HTTP upstreams receive. */
  readonly raw: Buffer;
}

/** A JSON-RPC error object. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}
