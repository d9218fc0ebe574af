/** proxy-from-env 2.x ships no types: the one function omnigate uses. */
declare module 'proxy-from-env' {
  /** The proxy URL for `url` from HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY (lower or upper case); '' for none. */
  export function getProxyForUrl(url: string | URL): string;
}
