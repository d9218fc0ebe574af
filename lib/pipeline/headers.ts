/** Response header names, spelled as the spec spells them. Only middleware/emit-headers.ts writes them. */
export const Header = {
  CheckedUrls: 'X-Checked-URLS',
  Confirmable: 'X-Confirmable',
  ForwardedFrom: 'X-Forwarded-From',
  JsonHash: 'X-Json-Hash',
  RequestId: 'X-Request-Id',
  RequiredConfirmations: 'X-Required-Confirmations',
  /** HIT or MISS on a request the cache of confirmed answers looked up (lib/cache). */
  Cache: 'X-Cache',
  /** How the answer was verified: `proof` (proven against an agreed header, lib/prove), `agreement` (N agreeing answers), `none` (not confirmable). */
  VerifiedBy: 'X-Verified-By',
  /** A proven answer: the hash of the block header N providers agreed on, which it was proven against. */
  BlockHash: 'X-Block-Hash',
  /** A confirmed answer's signed statement, with `attest:` only (lib/attest): `<statement>.<signature>`, base64url; a batch: one per confirmed member, comma-separated. */
  Attestation: 'X-Attestation',
  /** The id of the key that signed X-Attestation. */
  AttestationKey: 'X-Attestation-Key',
} as const;

/** The most bytes of URLs X-Checked-URLS lists; the rest is counted in a last `...(+M more)`. */
export const checkedUrlsMaxBytes = 4096;

/**
 * The X-Checked-URLS value: the URLs comma-separated, as many as fit in `maxBytes` (at least
 * one), then `...(+M more)` for the others. Node refuses an answer whose header block passes
 * 16 KiB, which 300 URLs did.
 */
export function checkedUrlsValue(urls: readonly string[], maxBytes = checkedUrlsMaxBytes): string {
  let value = urls[0] ?? '';
  let i = 1;
  for (; i < urls.length; i++) {
    if (value.length + 1 + urls[i]!.length > maxBytes) break;
    value += `,${urls[i]}`;
  }
  return i < urls.length ? `${value},...(+${urls.length - i} more)` : value;
}

/** The headers of a key with a budget (lib/access/budget.ts): what the answer cost, and what the key has left. */
export const creditHeaderNames = ['X-Credits', 'X-Credits-Remaining-Second', 'X-Credits-Remaining-Day'] as const;

/** Headers a browser client may read (CORS `Access-Control-Expose-Headers`). */
export const exposedHeaders = [...Object.values(Header), 'Age', ...creditHeaderNames, 'Retry-After'].join(', ');

/**
 * The CORS headers of a balancer answer (success or error), as a flat name/value list. Only a
 * request with an `Origin` header (a browser's cross-origin request) gets them, as with the
 * gin-contrib/cors of the gateway omnigate replaces: other clients never read them, and they are a quarter of an
 * answer's header bytes.
 */
export const corsHeaders: readonly string[] = ['Access-Control-Allow-Origin', '*', 'Access-Control-Expose-Headers', exposedHeaders];

/** Whether an answer to this request carries the CORS headers. */
export const wantsCors = (req: { headers: { origin?: string } }): boolean => req.headers.origin !== undefined;
