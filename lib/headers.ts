/** Response header names, spelled as the spec spells them. Only middleware/emit-headers.ts writes them. */
export const Header = {
  CheckedUrls: 'X-Checked-URLS',
  Confirmable: 'X-Confirmable',
  ForwardedFrom: 'X-Forwarded-From',
  JsonHash: 'X-Json-Hash',
  RequestId: 'X-Request-Id',
  RequiredConfirmations: 'X-Required-Confirmations',
} as const;

/** Headers a browser client may read (CORS `Access-Control-Expose-Headers`). */
export const exposedHeaders = Object.values(Header).join(', ');

/** The CORS headers of every balancer answer (success or error), as a flat name/value list. */
export const corsHeaders: readonly string[] = ['Access-Control-Allow-Origin', '*', 'Access-Control-Expose-Headers', exposedHeaders];
