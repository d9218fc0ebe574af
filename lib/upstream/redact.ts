/**
 * Redaction of upstream URLs for logs, /chains and error data (spec B6). Pure.
 *
 * Providers put the API key in the path (`/v2/KEY`, `/v3/KEY`, `/KEY/`), the query
 * (`?apikey=KEY`) or the user-info (`https://user:KEY@host`). The rule keeps what identifies the
 * provider and hides anything that could be a secret:
 * - user-info is replaced by `***`;
 * - a path segment is kept only if it looks like a word or a version (`eth`, `v2`, `rpc`,
 *   `mainnet`: letters, digits after a letter, `-`/`_`, at most 12 characters, at most 3 digits);
 *   any other segment becomes `***`;
 * - every query value becomes `***`.
 */
const wordSegment = /^[a-z][a-z0-9_-]{0,11}$/i;

/** decodeURIComponent that never throws (a malformed escape is kept as written). */
function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function keepSegment(segment: string): boolean {
  return segment === '' || (wordSegment.test(segment) && (segment.match(/\d/g)?.length ?? 0) <= 3);
}

export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return '***';
  }
  const auth = url.username || url.password ? '***@' : '';
  const path = url.pathname
    .split('/')
    .map((s) => (keepSegment(decode(s)) ? s : '***'))
    .join('/');
  const query = [...url.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=***`).join('&');
  return `${url.protocol}//${auth}${url.host}${path === '/' ? '' : path}${query ? `?${query}` : ''}`;
}

/**
 * The parts of a URL that redactUrl hides (path segments, query values, user-info), so a log
 * sink can scrub them from any text that might still carry them, e.g. a library's error message.
 * Parts shorter than 6 characters are left out: scrubbing them would mangle ordinary words.
 */
export function secretsOf(raw: string): string[] {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw.length >= 6 ? [raw] : [];
  }
  const parts = [
    ...url.pathname.split('/').filter((s) => !keepSegment(decode(s))),
    ...[...url.searchParams.values()],
    decode(url.password),
    decode(url.username),
  ];
  return [...new Set(parts.flatMap((p) => [p, decode(p)]))].filter((p) => p.length >= 6);
}
