/** The checks of a grant's rights (lib/access/rights.ts): N within bounds, chains, methods, writes, admin. */
import test from 'ava';
import { compileRights, type Grant } from '../../../../lib/access/keyring.js';
import { adminRefusal, chainRefusal, confirmationsFor, methodRefusal, unauthorized } from '../../../../lib/access/rights.js';
import type { AccessRights } from '../../../../config/types.js';

const grant = (r: Partial<AccessRights>): Grant => {
  const entry: AccessRights = { denyMethods: [], writes: true, cacheBypass: false, admin: false, ...r };
  return { label: 'k', tier: 'key', rights: compileRights(entry), entry };
};

test('confirmationsFor: a path\'s <n> within the bounds is kept, outside them refused; without one, the chain\'s N is brought within', (t) => {
  const g = grant({ minConfirmations: 2, maxConfirmations: 3 });
  t.is(confirmationsFor(g, 2, 1, 1), 2);
  t.is(confirmationsFor(g, 3, 1, 1), 3);
  for (const asked of [1, 4]) {
    const err = confirmationsFor(g, asked, 1, 'id');
    if (typeof err === 'number') return t.fail();
    t.is(err.status, 403);
    t.is(err.rpcId, 'id');
    t.like(err.data, { reason: 'confirmations', asked, min: 2, max: 3 });
  }
  t.is(confirmationsFor(g, undefined, 1, 1), 2);
  t.is(confirmationsFor(g, undefined, 5, 1), 3);
  t.is(confirmationsFor(g, undefined, 2, 1), 2);
  t.is(confirmationsFor(grant({}), undefined, 4, 1), 4);
  t.is(confirmationsFor(grant({}), 7, 4, 1), 7);
});

test('chainRefusal, methodRefusal and adminRefusal refuse what the rights leave out, 403 with the reason', (t) => {
  t.is(chainRefusal(grant({}), '1', 1), undefined);
  t.is(chainRefusal(grant({ chains: ['1'] }), '1', 1), undefined);
  t.like(chainRefusal(grant({ chains: ['1'] }), '10', 1)?.data, { reason: 'chain', chain: '10' });
  t.is(methodRefusal(grant({}), 'eth_sendRawTransaction', 1), undefined);
  t.like(methodRefusal(grant({ writes: false }), 'eth_sendRawTransaction', 1)?.data, { reason: 'write' });
  t.is(methodRefusal(grant({ writes: false }), 'eth_call', 1), undefined);
  t.like(methodRefusal(grant({ methods: ['eth_call'] }), 'eth_getLogs', 1)?.data, { reason: 'method', method: 'eth_getLogs' });
  t.like(methodRefusal(grant({ methods: ['eth_call'], denyMethods: ['eth_call'] }), 'eth_call', 1)?.data, { reason: 'method' });
  t.is(adminRefusal(grant({ admin: true }), '/metrics'), undefined);
  t.is(adminRefusal(grant({}), '/metrics')?.status, 403);
});

test('unauthorized: 401 -32018 with the challenge header and the reason only', (t) => {
  const err = unauthorized('unknown', 5);
  t.is(err.status, 401);
  t.is(err.rpcCode, -32018);
  t.is(err.rpcId, 5);
  t.deepEqual(err.data, { reason: 'unknown' });
  t.deepEqual(err.headers, { 'WWW-Authenticate': 'Bearer realm="omnigate"' });
});
