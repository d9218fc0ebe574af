/**
 * Each HTTP(S) upstream's share of the socket cap, on the wire, on both HTTP clients: a busy
 * upstream borrows the room the cap does not use (more calls at once than its share), gives it
 * back when the others need their shares or once it has gone cold (its borrowed connections idle:
 * closed, so that another upstream may borrow the room), and under sustained load on every
 * upstream, or on two borrowing at once, the connections opened stay bounded (no connection per
 * call); calls waiting for lent room go as soon as another upstream frees room, none of their
 * own upstream's calls ending. Fake upstreams, each its own HTTP server on port 0 that holds every
 * call 100–200 ms (one test: 400–500 ms; the lent-room tests: until the test lets it answer) and
 * counts the calls it holds and the connections open on its side; the calls go straight to the
 * registry's transports (the last test: to transports of both clients under one cap).
 */
import test, { type ExecutionContext } from 'ava';
import { ConnectionCount, countingServer } from '../../support/counting-server.js';
import { createRegistry, shareOfCap, type Registry } from '../../../lib/upstream/registry.js';
import type { Transport, UpstreamRequest } from '../../../lib/upstream/transport/contract.js';
import { makeConfig } from '../../support/gateway.js';
import { SocketPool } from '../../../lib/upstream/transport/sockets.js';
import { createHttpTransport } from '../../../lib/upstream/transport/http.js';
import { createUndiciTransport } from '../../../lib/upstream/transport/undici.js';

interface Fake {
  url: string;
  /** Calls held now, and the most at once. */
  held: number;
  mostHeld: number;
  calls: number;
  /** Connections open on its side. */
  connections: ConnectionCount;
}

interface Farm {
  fakes: Fake[];
  /** Connections over every server: open now, the most at once, every one opened. */
  connections: ConnectionCount;
}

/**
 * `count` servers, each holding a call `holdMs` to `holdMs` + 100 ms before its answer. With
 * `gate`, the servers but the first hold every call until they have held `gate` at once (then
 * answer as the others do), or for at most `gateCapMs`: whether an upstream reaches `gate` calls
 * at once then depends on the calls the gateway lets go, not on how fast a loaded machine sends
 * them; a gateway that never lets `gate` go at once is seen (`mostHeld`) once the cap has passed.
 */
async function farm(t: ExecutionContext, count: number, holdMs = 100, gate?: { calls: number; capMs: number }): Promise<Farm> {
  const connections = new ConnectionCount();
  const fakes: Fake[] = [];
  for (let i = 0; i < count; i += 1) {
    const fake: Fake = { url: '', held: 0, mostHeld: 0, calls: 0, connections: new ConnectionCount() };
    const gated: (() => void)[] = [];
    const origin = await countingServer(t, [connections, fake.connections], (req, res) => {
      req.resume();
      req.on('end', () => {
        fake.calls += 1;
        fake.held += 1;
        fake.mostHeld = Math.max(fake.mostHeld, fake.held);
        const reply = () =>
          setTimeout(
            () => {
              fake.held -= 1;
              res.writeHead(200, { 'content-type': 'application/json' });
              res.end('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
            },
            holdMs + ((fake.calls * 37) % 100),
          );
        if (gate === undefined || i === 0 || fake.mostHeld >= gate.calls) {
          // (the gate opens: the calls it held go too)
          for (const go of gated.splice(0)) go();
          return void reply();
        }
        let gone = false;
        const go = () => {
          if (gone) return;
          gone = true;
          clearTimeout(cap);
          reply();
        };
        const cap = setTimeout(() => {
          gated.splice(gated.indexOf(go), 1);
          go();
        }, gate.capMs);
        gated.push(go);
      });
    });
    fake.url = `${origin}/`;
    fakes.push(fake);
  }
  return { fakes, connections };
}

const request = (): UpstreamRequest => ({
  payload: { calls: [{ id: 1, method: 'eth_chainId', params: [] }], batch: false, raw: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}') },
  requestId: 'req-1',
  signal: new AbortController().signal,
  timeoutMs: 30_000,
  maxBytes: 1_000_000,
});

const cap = 64;
const upstreams = 8;
const share = shareOfCap(cap, upstreams);

function registry(t: ExecutionContext, f: Farm, client: 'node' | 'undici', upstreamSockets = cap): Registry {
  const r = createRegistry(makeConfig({ upstreams: { client }, limits: { upstreamSockets }, chains: { 1: { rpcs: f.fakes.map((x) => x.url) } } }));
  t.teardown(() => r.close());
  return r;
}

/** `workers` loops of `calls` calls each, one after the other, to upstream `index`; resolves with the answers' bodies. */
async function load(r: Registry, index: number, workers: number, calls: number, until?: () => boolean): Promise<string[]> {
  const transport = r.chains.get('1')!.upstreams[index]!.transport;
  const bodies: string[] = [];
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = 0; i < calls || (until !== undefined && !until()); i += 1) bodies.push((await transport.send(request())).body.toString());
    }),
  );
  return bodies;
}

const answer = '{"jsonrpc":"2.0","id":1,"result":"0x1"}';

/** Waits until `done()` holds, polling, for at most `capMs`; whether it holds. */
async function until(done: () => boolean, capMs = 20_000): Promise<boolean> {
  for (const end = Date.now() + capMs; !done() && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 20));
  return done();
}

for (const client of ['node', 'undici'] as const) {
  test(`${client}: a busy upstream borrows the room the cap does not use: more calls at once than its share, never more sockets than the cap`, async (t) => {
    t.is(share, 8);
    const f = await farm(t, upstreams);
    const r = registry(t, f, client);
    const bodies = await load(r, 0, 40, 1);
    t.is(bodies.length, 40);
    t.true(
      bodies.every((b) => b === answer),
      'every call answered',
    );
    t.true(f.fakes[0]!.mostHeld > share, `${f.fakes[0]!.mostHeld} calls at once at the busy upstream (its share: ${share})`);
    t.true(f.connections.most <= cap, `${f.connections.most} connections at once (server side)`);
    t.true(r.sockets!.peak <= cap, `${r.sockets!.peak} sockets at once (gateway side)`);
    t.true(r.sockets!.peak > share, `${r.sockets!.peak} sockets at once: above the share`);
    t.is(r.sockets!.borrowed, 0, 'all lent room given back');
  });

  test(`${client}: a borrowing upstream gives its room back when the others load their shares; the cap holds`, async (t) => {
    // The others' calls held until each has its share at once (for at most 15 s): on a loaded
    // machine, calls held 100–200 ms, sent one after the other as room comes back, need not overlap.
    const f = await farm(t, upstreams, 100, { calls: share, capMs: 15_000 });
    const r = registry(t, f, client);
    const busy = f.fakes[0]!;
    let othersDone = false;
    // The busy upstream keeps 40 calls going until the others are done.
    const first = load(r, 0, 40, 1, () => othersDone);
    // Its first 40 calls arrived: it held more than its share at once by then (it borrowed).
    while (busy.calls < 40) await new Promise((resolve) => setTimeout(resolve, 10));
    const borrowedAtStart = busy.mostHeld;
    // Every other upstream: its share of callers, each making 6 calls one after the other.
    const others = await Promise.all(Array.from({ length: upstreams - 1 }, (_, i) => load(r, i + 1, share, 6)));
    othersDone = true;
    const firstBodies = await first;
    t.true(borrowedAtStart > share, `${borrowedAtStart} calls at once at the busy upstream before the others started (its share: ${share})`);
    t.true(
      [firstBodies, ...others].every((list) => list.every((b) => b === answer)),
      'every call answered',
    );
    for (let i = 1; i < upstreams; i += 1) t.is(f.fakes[i]!.mostHeld, share, `upstream ${i} reached its share of calls at once`);
    t.true(r.sockets!.peak <= cap, `${r.sockets!.peak} sockets at once (gateway side)`);
    // The servers count a connection until they read its FIN: a connection the gateway closed for
    // another may still count for a moment there.
    t.true(f.connections.most <= cap + 4, `${f.connections.most} connections at once (server side)`);
  });

  test(`${client}: sustained load on every upstream, above their shares: no connection opened once the shares are settled, not one per call`, async (t) => {
    const f = await farm(t, upstreams);
    const r = registry(t, f, client);
    const calls = () => f.fakes.reduce((n, x) => Math.min(n, x.calls), Infinity);
    const until = async (n: number) => {
      while (calls() < n) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    // 12 callers per upstream (its share is 8), each calling until told to stop.
    let stop = false;
    const all = Promise.all(Array.from({ length: upstreams }, (_, i) => load(r, i, 12, 1, () => stop)));
    // Settled: the lent room given back, each upstream at its share.
    await until(24);
    const settled = f.connections.opened;
    await until(24 + 48);
    const later = f.connections.opened;
    stop = true;
    const bodies = (await all).flat();
    t.true(
      bodies.every((b) => b === answer),
      'every call answered',
    );
    t.true(later - settled <= 4, `${later - settled} connections opened while every upstream made 48 calls (${settled} before)`);
    t.true(settled <= cap * 1.5, `${settled} connections opened to settle`);
    t.true(r.sockets!.peak <= cap, `${r.sockets!.peak} sockets at once (gateway side)`);
    t.true(f.connections.most <= cap + 4, `${f.connections.most} connections at once (server side)`);
  });

  test.serial(`${client}: borrowed room gone cold is given back: the first upstream's borrowed connections are closed, a second busy upstream borrows the room`, async (t) => {
    // (Serial, as the next test: the calls at once at a server are what they count, and the other
    // tests' load in the same process would spread a burst's calls over time.)
    // Three upstreams under 96 sockets: a share of 32 each. A lent call counts twice (its socket
    // and its loan): the first upstream borrows about half the 64 sockets nobody holds (31), and
    // once those are closed the second borrows about half the 32 left by the first's share and its
    // own (15). Kept open, the first's borrowed connections (idle, but counted) would leave it next
    // to none (none on undici, 7 on node:http, measured): the second must borrow at least 12 (an
    // eighth of the cap).
    const coldCap = 96;
    const coldShare = shareOfCap(coldCap, 3);
    t.is(coldShare, 32);
    // Calls held 400–500 ms: a burst's calls are all at the server at once, on a loaded machine too.
    const f = await farm(t, 3, 400);
    const r = registry(t, f, client, coldCap);
    const [first, second] = f.fakes as [Fake, Fake];
    // The first upstream bursts above its share, then goes quiet.
    const burst = await load(r, 0, 80, 1);
    t.true(
      burst.every((b) => b === answer),
      'every call of the burst answered',
    );
    t.true(first.mostHeld > coldShare, `${first.mostHeld} calls at once at the first upstream (its share: ${coldShare})`);
    t.true(first.connections.most > coldShare, `${first.connections.most} connections at once to the first upstream (its share: ${coldShare})`);
    // Gone cold: its borrowed connections are closed; its share's are kept alive.
    const afterBurst = first.connections.open;
    const closed = await until(() => first.connections.open <= coldShare);
    t.true(closed, `${first.connections.open} connections still open to the first upstream (${afterBurst} after its burst; its share: ${coldShare})`);
    t.is(first.connections.open, coldShare, "the first upstream's share of connections kept alive");
    // The second upstream, busy now, borrows the room given back.
    const bodies = await load(r, 1, 80, 1);
    t.true(
      bodies.every((b) => b === answer),
      'every call of the second upstream answered',
    );
    t.true(second.mostHeld >= coldShare + coldCap / 8, `${second.mostHeld} calls at once at the second upstream (its share: ${coldShare})`);
    t.true(r.sockets!.peak <= coldCap, `${r.sockets!.peak} sockets at once (gateway side)`);
    t.is(r.sockets!.borrowed, 0, 'all lent room given back');
  });

  test.serial(`${client}: two upstreams busy above their shares at once: both borrow, neither closes the other's connections call by call`, async (t) => {
    const f = await farm(t, upstreams);
    const r = registry(t, f, client);
    const [a, b] = f.fakes as [Fake, Fake];
    const calls = () => Math.min(a.calls, b.calls);
    // 24 callers on each of two upstreams (a share of 8 each), calling until told to stop; the
    // six others idle: the cap has room for both to borrow, not for all their calls (those refused
    // room wait). A borrowed connection that falls idle between waves of answers is kept while its
    // upstream's calls are refused room: closed, it would be opened again at the next wave.
    let stop = false;
    const all = Promise.all([load(r, 0, 24, 1, () => stop), load(r, 1, 24, 1, () => stop)]);
    t.true(await until(() => calls() >= 48), 'both upstreams answer');
    const settled = f.connections.opened;
    const openSettled = f.connections.open;
    a.mostHeld = b.mostHeld = 0;
    // Each makes 320 more calls: longer than a borrowed connection may stay idle before it is closed.
    t.true(await until(() => calls() >= 48 + 320, 60_000), 'both upstreams keep answering');
    const later = f.connections.opened;
    // Connections closed meanwhile: those opened that are not open now.
    const closed = later - settled - (f.connections.open - openSettled);
    stop = true;
    const bodies = (await all).flat();
    t.true(
      bodies.every((x) => x === answer),
      'every call answered',
    );
    t.true(a.mostHeld > share && b.mostHeld > share, `${a.mostHeld} and ${b.mostHeld} calls at once at the two upstreams (their share: ${share}): both borrowed`);
    // Churn is a connection closed and another opened: none closed. undici's pools may still grow
    // by a spare connection or two (a call started in the turn another's connection is freed takes
    // another: undici.ts), more on a loaded machine over this long a run: opened, never closed.
    t.true(closed <= 2, `${closed} connections closed while each upstream made 320 calls`);
    t.true(later - settled <= 8, `${later - settled} connections opened while each upstream made 320 calls (${settled} before)`);
    t.true(r.sockets!.peak <= cap, `${r.sockets!.peak} sockets at once (gateway side)`);
    t.is(r.sockets!.borrowed, 0, 'all lent room given back');
  });
}

/** A fake upstream that holds every call until `open()`: none of its calls ends before. */
interface Gated {
  url: string;
  /** Calls held now. */
  held: number;
  answered: number;
  connections: ConnectionCount;
  /** Answers the calls held, and every later one at once. */
  open(): void;
}

async function gated(t: ExecutionContext, all: ConnectionCount): Promise<Gated> {
  let waiting: (() => void)[] | undefined = [];
  const fake: Gated = {
    url: '',
    held: 0,
    answered: 0,
    connections: new ConnectionCount(),
    open: () => {
      const list = waiting ?? [];
      waiting = undefined;
      for (const answer of list) answer();
    },
  };
  const origin = await countingServer(t, [all, fake.connections], (req, res) => {
    req.resume();
    req.on('end', () => {
      fake.held += 1;
      const answer = () => {
        fake.held -= 1;
        fake.answered += 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
      };
      if (waiting === undefined) answer();
      else waiting.push(answer);
    });
  });
  fake.url = `${origin}/`;
  return fake;
}

/**
 * `count` calls to `transport`, one per turn of the event loop; their bodies (or errors). A
 * socket node opens for a call counts as open at once and as reserved until node hands it to the
 * request, a tick later: calls made in one turn would leave less room to lend than the sockets
 * they end up holding.
 */
async function paced(transport: Transport, count: number): Promise<Promise<string>[]> {
  const calls: Promise<string>[] = [];
  for (let i = 0; i < count; i += 1) {
    calls.push(transport.send(request()).then((x) => x.body.toString(), (err: Error) => err.message));
    await new Promise((resolve) => setImmediate(resolve));
  }
  return calls;
}

for (const client of ['node', 'undici'] as const) {
  test.serial(`${client}: a call waiting for lent room goes as soon as another upstream frees room (its lent calls end, the sweep closes its cold borrowed sockets), none of its own upstream's calls ending`, async (t) => {
    // Three upstreams under 24 sockets: a share of 8 each; a lent call counts twice (its socket
    // and its loan). B holds 12 calls (8 in its share, 4 on lent room); A then sends 16: 8 in its
    // share (20 sockets open), the others refused room (20 + B's 4 loans reach the cap). A's
    // server answers nothing until the end: no call of A ends, so A's own calls wake none of its
    // waiting ones.
    const roomCap = 24;
    t.is(shareOfCap(roomCap, 3), 8);
    const all = new ConnectionCount();
    const a = await gated(t, all);
    const b = await gated(t, all);
    const idle = await gated(t, all);
    const r = createRegistry(makeConfig({ upstreams: { client }, limits: { upstreamSockets: roomCap }, chains: { 1: { rpcs: [a.url, b.url, idle.url] } } }));
    t.teardown(() => {
      a.open();
      b.open();
      return r.close();
    });
    const send = (index: number, count: number) => paced(r.chains.get('1')!.upstreams[index]!.transport, count);
    const bCalls = await send(1, 12);
    t.true(await until(() => b.held === 12), `${b.held} calls of B at its server`);
    t.is(r.sockets!.borrowed, 4, 'B is on 4 loans');
    const aCalls = await send(0, 16);
    t.true(await until(() => a.held === 8), `${a.held} calls of A at its server`);
    // B's calls end: their 4 loans are given back (B's 12 sockets, idle now, still count): room
    // for A's 9th and 10th calls, each counted twice (its socket and its loan).
    b.open();
    t.deepEqual(await Promise.all(bCalls), Array(12).fill(answer));
    t.true(await until(() => a.held >= 10, 10_000), `${a.held} calls of A at its server once B's loans were given back (8 before)`);
    // B's 4 borrowed sockets go cold and are closed by the sweep: room for A's 11th and 12th.
    t.true(await until(() => a.held >= 12, 10_000), `${a.held} calls of A at its server once B's borrowed sockets were closed (10 before; B's connections open: ${b.connections.open})`);
    t.is(a.answered, 0, 'no call of A ended');
    t.true(await until(() => b.connections.open === 8), `B's share of connections kept alive (${b.connections.open} open)`);
    t.true(r.sockets!.peak <= roomCap, `${r.sockets!.peak} sockets at once (gateway side)`);
    a.open();
    t.deepEqual(await Promise.all(aCalls), Array(16).fill(answer));
    t.is(r.sockets!.borrowed, 0, 'all lent room given back');
  });
}

test.serial('node:http and undici under one cap: the sweep of another upstream\'s cold borrowed sockets wakes the calls waiting for lent room on both clients', async (t) => {
  // One cap of 32 sockets; three upstreams with a share of 8 each: B (node:http) holds 16 calls
  // (8 on lent room), A (node:http) and C (undici) 8 each: the cap is full, their further calls
  // are refused room. B's calls end: its 16 sockets stay open (idle), nothing to lend yet; the
  // sweep closes B's 8 borrowed ones, and both A and C get room, none of their calls ending.
  const pool = new SocketPool(32);
  const all = new ConnectionCount();
  const [a, b, c] = [await gated(t, all), await gated(t, all), await gated(t, all)];
  const options = { sockets: pool, share: 8, maxSockets: 32 };
  const [ta, tb, tc] = [createHttpTransport(a.url, options), createHttpTransport(b.url, options), createUndiciTransport(c.url, options)];
  t.teardown(async () => {
    for (const fake of [a, b, c]) fake.open();
    await Promise.all([ta.close(), tb.close(), tc.close()]);
  });
  const bCalls = await paced(tb, 16);
  t.true(await until(() => b.held === 16), `${b.held} calls of B at its server`);
  t.is(pool.borrowed, 8, 'B is on 8 loans');
  const aCalls = await paced(ta, 12);
  const cCalls = await paced(tc, 12);
  t.true(await until(() => a.held === 8 && c.held === 8), `${a.held} calls of A and ${c.held} of C at their servers`);
  b.open();
  t.deepEqual(await Promise.all(bCalls), Array(16).fill(answer));
  t.is(pool.open, 32, 'the cap is full: B\'s sockets idle, A\'s and C\'s busy');
  t.true(await until(() => a.held > 8 && c.held > 8, 10_000), `${a.held} calls of A and ${c.held} of C at their servers once B's borrowed sockets were closed (8 each before; B's connections open: ${b.connections.open})`);
  t.is(a.answered + c.answered, 0, 'no call of A or C ended');
  t.true(pool.peak <= 32, `${pool.peak} sockets at once (gateway side)`);
  a.open();
  c.open();
  t.deepEqual(await Promise.all([...aCalls, ...cCalls]), Array(24).fill(answer));
  t.is(pool.borrowed, 0, 'all lent room given back');
});
