/** A JSON-RPC id as omnigate accepts it: a string or a safe integer. */
export type RpcId = string | number;

/** One validated JSON-RPC call (a batch has several). */
export interface RpcCall {
  readonly id: RpcId;
  /**
   * The id's JSON text as the client wrote it, when that is not how JSON.stringify writes `id`
   * (`1.0`, `1e2`, `-0`, `"\u0031"`): answers carry it byte for byte, as a node echoes an id (a
   * client may match answers by its own text). Absent for the usual id.
   */
  readonly idText?: string;
  readonly method: string;
  /** Always an array: an absent `params` is read as `[]`. */
  readonly params: readonly unknown[];
  /**
   * A key of the request object that Go nodes read as `jsonrpc`, `id`, `method` or `params`
   * while it is spelled otherwise (`"Params"`, `"METHOD"`: parse.ts goAliasOf): the nodes may
   * answer another call than this one, so it is never confirmable (one upstream).
   */
  readonly alias?: string;
}

/** The request body, parsed and validated, with the bytes it came from. */
export interface RpcPayload {
  readonly calls: readonly RpcCall[];
  readonly batch: boolean;
  /** The body exactly as the client sent it: this is what HTTP upstreams receive. */
  readonly raw: Buffer;
  /**
   * A batch's members in the order they came (absent for a single call). `calls` then holds the
   * valid calls only; each member is answered on its own (lib/pipeline/batch.ts).
   */
  readonly members?: readonly BatchMember[];
}

/**
 * One member of a batch: a valid call (with its own bytes, forwarded as the client wrote them),
 * a notification (no `id`: never answered, not forwarded), or a member refused on its own (its
 * error, and the raw JSON text of its id when it had a valid one, echoed byte for byte).
 */
export type BatchMember =
  | { readonly kind: 'call'; readonly call: RpcCall; readonly raw: Buffer }
  | { readonly kind: 'notification'; readonly method: string }
  | { readonly kind: 'invalid'; readonly error: Error; readonly raw: Buffer };

/** A JSON-RPC error object. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}
