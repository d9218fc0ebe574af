/**
 * The agent of an upstream when the caller hands in none: keep-alive with the configured limits,
 * a proxy agent when the config or the environment names a proxy (NO_PROXY applied; a malformed
 * one from the environment refused without showing it), and an idle socket that receives a stray
 * byte destroyed.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import test from 'ava';
import { HttpProxyAgent } from 'http-proxy-agent';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { ConfigError } from '../../../../../lib/errors.js';
import { createAgent, defaultKeepAliveMs, defaultMaxSockets, proxyFor } from '../../../../../lib/upstream/transport/agent.js';

const proxyVariables = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy', 'NO_PROXY', 'no_proxy'];

/** Runs `fn` with only these proxy variables set (the others unset), then restores the environment. */
function withEnv<T>(vars: Record<string, string>, fn: () => T): T {
  const saved = Object.fromEntries(proxyVariables.map((k) => [k, process.env[k]]));
  for (const k of proxyVariables) delete process.env[k];
  Object.assign(process.env, vars);
  try {
    return fn();
  } finally {
    for (const k of proxyVariables) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

test.serial('proxyFor should take the configured proxy over the environment\'s', (t) => {
  withEnv({ HTTPS_PROXY: 'http://env-proxy.test:3128' }, () => {
    t.is(proxyFor('https://rpc.test/v2/KEY', 'http://configured.test:8080'), 'http://configured.test:8080');
    t.is(proxyFor('https://rpc.test/v2/KEY', undefined), 'http://env-proxy.test:3128');
  });
});

test.serial('proxyFor should leave out hosts NO_PROXY names, and give none without a variable', (t) => {
  withEnv({ HTTPS_PROXY: 'http://env-proxy.test:3128', NO_PROXY: 'rpc.test' }, () => {
    t.is(proxyFor('https://rpc.test/v2/KEY', undefined), undefined);
    t.is(proxyFor('https://other.test/', undefined), 'http://env-proxy.test:3128');
  });
  withEnv({}, () => t.is(proxyFor('https://rpc.test/', undefined), undefined));
});

test.serial('proxyFor should refuse a proxy from the environment that is not an http(s) URL, without showing it', (t) => {
  withEnv({ HTTPS_PROXY: 'socks5://user:s3cret@proxy.test:1080' }, () => {
    const err = t.throws(() => proxyFor('https://rpc.test/', undefined), { instanceOf: ConfigError });
    t.regex(err!.message, /HTTPS_PROXY/);
    t.false(err!.message.includes('s3cret'));
  });
});

test.serial('proxyFor should refuse a proxy from the environment whose password has a bare %, without showing it', (t) => {
  withEnv({ HTTPS_PROXY: 'http://user:50%off-s3cret@proxy.test:3128' }, () => {
    const err = t.throws(() => proxyFor('https://rpc.test/', undefined), { instanceOf: ConfigError });
    t.regex(err!.message, /HTTPS_PROXY.* a % that is not a percent escape/);
    t.false(err!.message.includes('s3cret'));
  });
  withEnv({ HTTPS_PROXY: 'http://user:50%25off-s3cret@proxy.test:3128' }, () => t.is(proxyFor('https://rpc.test/', undefined), 'http://user:50%25off-s3cret@proxy.test:3128'));
});

test.serial('createAgent should make a keep-alive agent with the configured limits, https for https', (t) => {
  withEnv({}, () => {
    const plain = createAgent(new URL('http://rpc.test/'));
    t.true(plain instanceof http.Agent && !(plain instanceof https.Agent));
    t.like((plain as http.Agent & { options: http.AgentOptions }).options, { keepAlive: true, maxSockets: defaultMaxSockets, timeout: defaultKeepAliveMs, scheduling: 'lifo' });
    const tuned = createAgent(new URL('https://rpc.test/'), { maxSockets: 4, keepAliveMs: 500 });
    t.true(tuned instanceof https.Agent);
    t.like((tuned as http.Agent & { options: http.AgentOptions }).options, { maxSockets: 4, maxFreeSockets: 4, timeout: 500 });
    plain.destroy();
    tuned.destroy();
  });
});

test.serial('createAgent should make a proxy agent when a proxy is named', (t) => {
  withEnv({}, () => {
    t.true(createAgent(new URL('http://rpc.test/'), { proxy: 'http://proxy.test:3128' }) instanceof HttpProxyAgent);
    t.true(createAgent(new URL('https://rpc.test/'), { proxy: 'http://proxy.test:3128' }) instanceof HttpsProxyAgent);
  });
  withEnv({ HTTP_PROXY: 'http://env-proxy.test:3128' }, () => {
    t.true(createAgent(new URL('http://rpc.test/')) instanceof HttpProxyAgent);
  });
});

test.serial('an idle kept-alive socket that receives a stray byte should be destroyed, and one taken again no longer', (t) => {
  const agent = withEnv({}, () => createAgent(new URL('http://rpc.test/')));
  const socket = () => {
    const s = new net.Socket();
    let destroyed = 0;
    s.destroy = () => ((destroyed += 1), s);
    return Object.assign(s, { destroyedTimes: () => destroyed });
  };
  const idle = socket();
  t.true(agent.keepSocketAlive(idle));
  idle.emit('data', Buffer.from('stray'));
  t.is(idle.destroyedTimes(), 1);

  const reused = socket();
  t.true(agent.keepSocketAlive(reused));
  agent.reuseSocket(reused, {} as http.ClientRequest);
  reused.emit('data', Buffer.from('an answer'));
  t.is(reused.destroyedTimes(), 0, 'bytes of a socket in use are its answer');

  const unread = socket();
  Object.defineProperty(unread, 'readableLength', { value: 3 });
  t.false(agent.keepSocketAlive(unread), 'a socket with unread bytes is not kept');
  agent.destroy();
});
