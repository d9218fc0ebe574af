/**
 * `upstreams.client`: auto when absent (the default): undici unless node's HTTP client is
 * intercepted when the upstreams are built. nock is the real one (its interception is
 * process-wide: each ava file has its own process); OpenTelemetry's http instrumentation is stood
 * in for by a wrapper marked as shimmer marks its wrappers.
 */
import http from 'node:http';
import test from 'ava';
import { chooseClient, nodeHttpIntercepted } from '../../../../../lib/upstream/transport/choose.js';

test.serial('absent is auto, auto is undici while nothing intercepts node:http, and a named client is kept', (t) => {
  t.false(nodeHttpIntercepted());
  t.is(chooseClient('auto'), 'undici');
  t.is(chooseClient(undefined), 'undici');
  t.is(chooseClient('node'), 'node');
  t.is(chooseClient('undici'), 'undici');
});

test.serial('auto is node while nock is active, and undici again once nock is restored', async (t) => {
  const { default: nock } = await import('nock');
  if (!nock.isActive()) nock.activate();
  try {
    t.true(nodeHttpIntercepted());
    t.is(chooseClient('auto'), 'node');
    t.is(chooseClient(undefined), 'node', 'absent is auto');
    t.is(chooseClient('undici'), 'undici', 'a named client is kept');
  } finally {
    nock.restore();
  }
  t.false(nodeHttpIntercepted());
  t.is(chooseClient('auto'), 'undici');
});

test.serial('auto is node while http.request is a shimmer wrapper (OpenTelemetry http instrumentation)', (t) => {
  const original = http.request;
  const wrapped = Object.assign((...args: Parameters<typeof http.request>) => original(...args), { __wrapped: true, __original: original });
  http.request = wrapped as typeof http.request;
  try {
    t.is(chooseClient('auto'), 'node');
  } finally {
    http.request = original;
  }
  t.is(chooseClient('auto'), 'undici');
});
