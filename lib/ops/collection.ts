/**
 * The Postman v2.1 collection served at `GET /collection.json`: every supported
 * method, once for `/rpc/{{chainId}}` (folder `eth`) and once for
 * `/confirmations/{{n}}/rpc/{{chainId}}` (folder `eth (confirmations)`, only the methods whose
 * answer confirmations can check). Built once, in code. Pure: no I/O.
 *
 * The methods, their example params and descriptions are the method table's (lib/jsonrpc/methods.ts
 * `example`); the examples are mainnet data (lib/jsonrpc/examples.ts). Block-pinned examples use
 * block 0x1312d00 (20,000,000), so they are confirmable (a hex block, not "latest"). With client
 * keys (`clientKeys`), a variable `apiKey` and an `X-Api-Key: {{apiKey}}` header on every request.
 */
import { methods, methodsWhere, neverConfirmable, pinnedMethods, ruleOf } from '../jsonrpc/methods.js';

export interface SupportedMethod {
  method: string;
  params: unknown[];
  description: string;
}

export interface PostmanVariable {
  key: string;
  value: string;
  type: 'string';
  description: string;
}

export interface PostmanUrl {
  raw: string;
  host: string[];
  path: string[];
}

export interface PostmanRequest {
  method: 'POST';
  header: { key: string; value: string }[];
  body: { mode: 'raw'; raw: string; options: { raw: { language: 'json' } } };
  url: PostmanUrl;
  description: string;
}

export interface PostmanRequestItem {
  name: string;
  request: PostmanRequest;
  response: unknown[];
}

export interface PostmanFolder {
  name: string;
  description: string;
  item: PostmanRequestItem[];
}

export interface PostmanCollection {
  info: { name: 'omnigate'; schema: typeof schemaUrl; description: string };
  variable: PostmanVariable[];
  item: PostmanFolder[];
}

export interface CollectionOptions {
  /** Default for `{{baseUrl}}` (a trailing slash is dropped). Default `http://localhost:5000`. */
  baseUrl?: string;
  /** Default for `{{chainId}}`. Default `'1'`. */
  chainId?: string;
  /** Default for `{{n}}`, a positive integer. Default 2. */
  confirmations?: number;
  /**
   * Path the routes are mounted under, as in `/gateway` for `app.use('/gateway', rpc)`: each
   * request URL is then `{{baseUrl}}/gateway/rpc/{{chainId}}`. Default '' (the root).
   */
  pathPrefix?: string;
  /**
   * The gateway asks for client keys (`access:`): a collection variable `apiKey` (empty: the user
   * fills it in) and an `X-Api-Key: {{apiKey}}` header on every request. Default false.
   */
  clientKeys?: boolean;
}

const schemaUrl = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json';

/** The standard execution-layer JSON-RPC methods omnigate forwards, with mainnet example params: the method table's rows with an example, in its order. */
export const supportedMethods: readonly SupportedMethod[] = methodsWhere((e) => e.example !== undefined).map((method) => ({ method, ...methods[method]!.example! }));

/** Methods users commonly configure as confirmable (`confirmableMethods`); shown in the confirmations folder too. */
const commonlyConfigured = ['eth_getBlockByHash', 'eth_getTransactionReceipt', 'eth_getTransactionByHash'];

function confirmability(method: string): string {
  if (pinnedMethods.includes(method)) return 'Confirmable when pinned to a block (hex number, earliest or block hash), not with latest or pending.';
  if (neverConfirmable.has(method)) return 'Never confirmable: answered by one upstream.';
  const rule = ruleOf(method);
  if (rule?.confirmable) return rule.pin.kind === 'blockHash' || rule.pin.kind === 'txHash' ? 'Confirmable: pinned by a hash.' : 'Confirmable when pinned to a block (hex number, earliest or block hash), not with latest or pending.';
  if (rule) return `Answered by one upstream: ${rule.why}.`;
  return 'Answered by one upstream unless the config lists it as confirmable.';
}

const jsonHeader = { key: 'Content-Type', value: 'application/json' };
const keyHeader = { key: 'X-Api-Key', value: '{{apiKey}}' };

function requestItem(m: SupportedMethod, path: string[], clientKeys: boolean): PostmanRequestItem {
  const raw = JSON.stringify({ jsonrpc: '2.0', id: 1, method: m.method, params: m.params }, null, 2);
  return {
    name: m.method,
    request: {
      method: 'POST',
      header: clientKeys ? [{ ...jsonHeader }, { ...keyHeader }] : [{ ...jsonHeader }],
      body: { mode: 'raw', raw, options: { raw: { language: 'json' } } },
      url: { raw: ['{{baseUrl}}', ...path].join('/'), host: ['{{baseUrl}}'], path: [...path] },
      description: `${m.description} ${confirmability(m.method)}`,
    },
    response: [],
  };
}

/**
 * Builds the Postman Collection v2.1 of every supported method. The options only set the
 * defaults of the collection variables `baseUrl`, `chainId` and `n`.
 * @throws RangeError when `confirmations` is not a positive integer.
 * @example
 * ```ts
 * const collection = buildCollection({ baseUrl: 'https://rpc.example.com', chainId: '10', confirmations: 3 });
 * res.setHeader('Content-Type', 'application/json');
 * res.end(JSON.stringify(collection));
 * ```
 */
export function buildCollection(options: CollectionOptions = {}): PostmanCollection {
  const n = options.confirmations ?? 2;
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`confirmations must be a positive integer, got ${n}`);
  const prefix = (options.pathPrefix ?? '').split('/').filter((s) => s !== '');
  const confirmable = supportedMethods.filter((m) => pinnedMethods.includes(m.method) || commonlyConfigured.includes(m.method));
  const keys = options.clientKeys ?? false;
  return {
    info: {
      name: 'omnigate',
      schema: schemaUrl,
      description:
        'Verifying JSON-RPC load balancer for EVM chains. Folder "eth" calls /rpc/{{chainId}}, where a confirmable ' +
        'call is checked against the chain\'s configured number of upstreams; folder "eth (confirmations)" calls ' +
        '/confirmations/{{n}}/rpc/{{chainId}}, where {{n}} upstreams must agree.',
    },
    variable: [
      { key: 'baseUrl', value: (options.baseUrl ?? 'http://localhost:5000').replace(/\/+$/, ''), type: 'string', description: 'omnigate base URL' },
      { key: 'chainId', value: options.chainId ?? '1', type: 'string', description: 'EVM chain id of the configured chain' },
      { key: 'n', value: String(n), type: 'string', description: 'number of upstreams that must agree' },
      ...(keys ? [{ key: 'apiKey', value: '', type: 'string' as const, description: 'your client key (access.keys), sent as X-Api-Key on every request' }] : []),
    ],
    item: [
      {
        name: 'eth',
        description: 'Every supported method on /rpc/{{chainId}}.',
        item: supportedMethods.map((m) => requestItem(m, [...prefix, 'rpc', '{{chainId}}'], keys)),
      },
      {
        name: 'eth (confirmations)',
        description:
          'Methods whose answers confirmations can check, on /confirmations/{{n}}/rpc/{{chainId}}. Block-pinned ' +
          'examples use a hex block number; the by-hash methods are confirmed only when the config lists them.',
        item: confirmable.map((m) => requestItem(m, [...prefix, 'confirmations', '{{n}}', 'rpc', '{{chainId}}'], keys)),
      },
    ],
  };
}
