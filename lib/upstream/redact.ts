/**
 * Redaction of URLs for logs, /chains, headers and error data, in one place: each upstream still
 * named with its key masked (redactUrl), and a database's URL with its password masked
 * (redactCredentials, for the indexer's DATABASE_URL and the errors that quote it), and a Redis URL
 * with its password masked wherever ioredis reads it from (redactRedisUrl). Pure.
 *
 * Providers put the API key in the path (`/v2/KEY`, `/v3/KEY`, `/KEY/`), the query
 * (`?apikey=KEY`, or `?KEY`), the user-info (`https://user:KEY@host`) or the host name
 * (`https://KEY.provider.io/`). The rule keeps what identifies the provider and hides anything
 * that could be a secret:
 * - user-info is replaced by `***`;
 * - a host label left of the last two is replaced by `***` when it looks like a key (see
 *   keyLabel: mixed letters and digits, a long run of digits, a UUID or a very long label), so
 *   `abc123def456ab.quiknode.pro` is hidden and `eth-mainnet.g.alchemy.com` is not;
 * - a path segment is kept only if it looks like a word or a version (`eth`, `v2`, `rpc`,
 *   `mainnet`: words joined by `-`/`_`, each in one case or capitalized, digits only at a word's
 *   end, at most 12 characters, at most 3 digits); any other segment becomes `***` (a short key
 *   in letters of one case alone, `qwkzjxmv`, still reads as a word: no rule tells them apart);
 * - every query value becomes `***`, and so does a query name that is not such a word.
 */
const wordSegment = /^[a-z][a-z0-9_-]{0,11}$/i;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** decodeURIComponent that never throws (a malformed escape is kept as written). */
function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * A part of a word-like segment (between `-` and `_`): a word in lower case, capitalized or in
 * capitals (up to 4: `C`, `RPC`), then up to 3 digits (`v2`, `arb1`, `dataseed1`), or digits
 * alone. A short key is random: its case mixed (`aBcDeF12`) or its digits among its letters
 * (`k3j9xmqw`), which no such part is.
 */
const wordPart = /^(?:[a-z]+|[A-Z][a-z]*|[A-Z]{1,4})\d{0,3}$|^\d{1,3}$/;

/** Whether a (decoded) path segment looks like a word or a version, not like a key: kept as is where a path is shown. */
export function keepSegment(segment: string): boolean {
  return segment === '' || (wordSegment.test(segment) && (segment.match(/\d/g)?.length ?? 0) <= 3 && segment.split(/[-_]/).every((part) => part === '' || wordPart.test(part)));
}

/**
 * Whether a host label looks like a key rather than a name. Names are words joined by `-`, with
 * a digit or three (`eth-mainnet`, `bsc-dataseed1`, `arb1`, `nd-123-456-789`); keys are random:
 * a part of 10+ characters mixing 3+ letters and 3+ digits (`abc123def456`), 8+ digits, a UUID,
 * or a part of 24+ characters.
 */
export function keyLabel(label: string): boolean {
  if (uuid.test(label)) return true;
  return label.split('-').some((part) => {
    const digits = part.match(/\d/g)?.length ?? 0;
    const letters = part.length - digits;
    return part.length >= 24 || (digits >= 8 && letters === 0) || (part.length >= 10 && digits >= 3 && letters >= 3);
  });
}

/** The host labels that keyLabel hides: never the last two (the registered name), never an IP. */
function hiddenLabels(hostname: string): string[] {
  if (hostname.startsWith('[') || /^[\d.]+$/.test(hostname)) return [];
  const labels = hostname.split('.');
  return labels.slice(0, Math.max(0, labels.length - 2)).filter(keyLabel);
}

export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return '***';
  }
  const auth = url.username || url.password ? '***@' : '';
  const hidden = new Set(hiddenLabels(url.hostname));
  const host = hidden.size === 0 ? url.host : `${url.hostname.split('.').map((l) => (hidden.has(l) ? '***' : l)).join('.')}${url.port ? `:${url.port}` : ''}`;
  const path = url.pathname
    .split('/')
    .map((s) => (keepSegment(decode(s)) ? s : '***'))
    .join('/');
  const query = [...url.searchParams.keys()].map((k) => `${keepSegment(k) ? encodeURIComponent(k) : '***'}=***`).join('&');
  return `${url.protocol}//${auth}${host}${path === '/' ? '' : path}${query ? `?${query}` : ''}`;
}

/**
 * A database URL or an error message about one, as logs and the indexer's errors show it: the
 * password and secret-looking query values masked (`postgres://user:secret@host/db` →
 * `postgres://user:***@host/db`), the user and database kept, since they are what an operator
 * needs to tell which database failed; in free text, the password of every `//user:secret@`.
 * (An upstream's URL hides more, redactUrl: its user-info, path and query may all be its key.)
 */
export function redactCredentials(text: string): string {
  // Free text unless it starts as a URL with an authority: `Error: ...` or `connect: ...` parse as
  // URLs of a scheme `error:` or `connect:`, with no password to mask, and came back whole.
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return redactInText(text);
  try {
    const u = new URL(text);
    if (u.password) u.password = '***';
    for (const key of [...u.searchParams.keys()]) {
      if (/pass|secret|key|token/i.test(key)) u.searchParams.set(key, '***');
    }
    return u.toString();
  } catch {
    return redactInText(text);
  }
}

/** Free text (an error message, a stack) that may contain URLs: the password of every `//user:secret@`. */
function redactInText(text: string): string {
  return text.replace(/(\/\/[^:@/\s]+):[^@/\s]+@/g, '$1:***@');
}

/**
 * A Redis URL as logs show it: host, port and database kept; the password hidden wherever ioredis
 * reads it from: the user-info (a lone user too: a password written without its colon) or a
 * `password` query parameter (ioredis takes each query parameter as an option), so every query
 * value is hidden. An unparsable URL is not shown at all.
 */
export function redactRedisUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if (u.password) u.password = '***';
    else if (u.username) u.username = '***';
    for (const key of new Set(u.searchParams.keys())) u.searchParams.set(key, '***');
    return u.toString();
  } catch {
    return 'redis (unparsable URL)';
  }
}

/**
 * The parts of a URL that redactUrl hides (user-info, key-like host labels, path segments, query
 * values and names; the user-info also as the Basic credentials sent), each also as it may be
 * echoed back (decoded, percent-encoded, JSON-escaped, as written in the config), so a text that
 * might still carry them can be scrubbed: a
 * library's error message, an upstream's 404 page or quota message. Parts shorter than 6
 * characters are left out: scrubbing them would mangle ordinary words.
 */
export function secretsOf(raw: string): string[] {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw.length >= 6 ? [raw] : [];
  }
  const labels = hiddenLabels(url.hostname).map((l) => {
    const at = raw.toLowerCase().indexOf(l); // the label as written (URL lowercases host names)
    return at === -1 ? [l] : [l, raw.slice(at, at + l.length)];
  });
  const parts = [
    ...labels.flat(),
    ...url.pathname.split('/').filter((s) => !keepSegment(decode(s))),
    ...[...url.searchParams.values()],
    ...[...url.searchParams.keys()].filter((k) => !keepSegment(k)),
    ...writtenQuery(url),
    decode(url.password),
    decode(url.username),
    ...basicCredentials(url),
  ];
  const forms = (p: string) => {
    const plain = decode(p);
    return [p, plain, encodeURIComponent(plain), JSON.stringify(plain).slice(1, -1)];
  };
  return [...new Set(parts.flatMap(forms))].filter((p) => p.length >= 6);
}

/**
 * The query's values and secret-looking names as they are sent, which searchParams does not give
 * back: it reads `+` as a space, so a base64 key `Ab+Cd…` would be looked for as `Ab Cd…` only,
 * while the provider receives, and may quote, `Ab+Cd…`.
 */
function writtenQuery(url: URL): string[] {
  return url.search
    .slice(1)
    .split('&')
    .flatMap((pair) => {
      const at = pair.indexOf('=');
      const name = at === -1 ? pair : pair.slice(0, at);
      const value = at === -1 ? '' : pair.slice(at + 1);
      return keepSegment(decode(name.replace(/\+/g, ' '))) ? [value] : [name, value];
    });
}

/**
 * The user-info as it travels: `Authorization: Basic base64(user:password)`, the user and password
 * decoded (transport/call.ts basicAuth) or as written in the URL (the ws client's), each with and
 * without its `=` padding. A provider that refuses the credentials may quote that header back.
 */
function basicCredentials(url: URL): string[] {
  if (!url.username && !url.password) return [];
  const pairs = [`${decode(url.username)}:${decode(url.password)}`, `${url.username}:${url.password}`];
  return pairs.flatMap((pair) => {
    const base64 = Buffer.from(pair).toString('base64');
    return [base64, base64.replace(/=+$/, '')];
  });
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The test of whether an answer holds one of the given secrets (an upstream that echoed its own
 * URL or key), ignoring case as scrubberOf does: a provider may quote the key upper-cased (`KEY
 * ABC123… IS INVALID`), and an answer the scrubber would mask must not be relayed as written
 * either. The body is read as latin1 (one character per byte, no decoding) and each secret as
 * its UTF-8 bytes read the same way, so bytes are matched to bytes (the case ignored is ASCII's:
 * keys in URLs are ASCII; a non-ASCII letter is found as written).
 */
export function echoerOf(own: readonly string[]): (body: Buffer) => boolean {
  const unique = [...new Set(own)].filter((s) => s.length > 0);
  if (unique.length === 0) return () => false;
  const pattern = new RegExp(unique.map((s) => escapeRegExp(Buffer.from(s).toString('latin1'))).join('|'), 'i');
  return (body) => pattern.test(body.toString('latin1'));
}

/**
 * A function that replaces every given secret in a text by `***`, ignoring case (a host name
 * comes back in any case, and hiding a little more is the safe side). Longer secrets first, so
 * a secret that contains another is hidden whole.
 */
export function scrubberOf(secrets: readonly string[]): (text: string) => string {
  const unique = [...new Set(secrets)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  if (unique.length === 0) return (text) => text;
  const pattern = new RegExp(unique.map(escapeRegExp).join('|'), 'gi');
  return (text) => text.replace(pattern, '***');
}
