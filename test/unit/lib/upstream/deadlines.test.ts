import test from 'ava';
import { DeadlineList, deadlineList, type Due } from '../../../../lib/upstream/deadlines.js';
import { until } from '../../../support/wait.js';

/** An owner of a deadline that records when it expires, and may act on others then. */
class Item implements Due {
  dueAt = 0;
  duePrev: Due | undefined = undefined;
  dueNext: Due | undefined = undefined;
  dueList: DeadlineList | undefined = undefined;
  constructor(
    readonly name: string,
    private readonly seen: string[],
    private readonly then?: () => void,
  ) {}
  expire(): void {
    this.seen.push(this.name);
    this.then?.();
  }
}

/**
 * Waits until `n` deadlines expired (a loaded machine fires timers late, never early); a wrong
 * one (removed, or out of order) shows in what was seen by then, in order.
 */
const expired = (seen: string[], n: number) => until(() => seen.length >= n);

test('deadlines expire once each, in the order they fall due; a removed one never does', async (t) => {
  const seen: string[] = [];
  const list = deadlineList(15);
  const a = new Item('a', seen);
  const b = new Item('b', seen);
  const c = new Item('c', seen);
  list.add(a);
  list.add(b);
  list.add(c);
  t.is(b.dueList, list);
  DeadlineList.remove(b);
  t.is(b.dueList, undefined, 'out of the list once removed');
  DeadlineList.remove(b);
  await expired(seen, 2);
  t.deepEqual(seen, ['a', 'c']);
  t.is(a.dueList, undefined, 'out of the list once expired');
  DeadlineList.remove(a);
  t.deepEqual(seen, ['a', 'c']);
});

test('an expiry may remove a deadline due at the same time, or add one: each is honoured', async (t) => {
  const seen: string[] = [];
  const list = deadlineList(12);
  const second = new Item('second', seen);
  const later = new Item('later', seen);
  const first = new Item('first', seen, () => {
    DeadlineList.remove(second);
    list.add(later);
  });
  list.add(first);
  list.add(second);
  await expired(seen, 2);
  t.deepEqual(seen, ['first', 'later']);
});

test('lists of different durations keep their own order; an emptied list is made again at its next deadline', async (t) => {
  const seen: string[] = [];
  const long = deadlineList(40);
  const short = deadlineList(10);
  t.is(deadlineList(40), long, 'one list per duration');
  long.add(new Item('long', seen));
  short.add(new Item('short', seen));
  await expired(seen, 2);
  t.deepEqual(seen, ['short', 'long']);
  const again = deadlineList(10);
  t.not(again, short, 'the emptied list was dropped');
  again.add(new Item('again', seen));
  await expired(seen, 3);
  t.deepEqual(seen, ['short', 'long', 'again']);
});

test('no deadline keeps the process alive: its timer is unref\'d', async (t) => {
  const list = deadlineList(3_600_000);
  const item = new Item('hour', []);
  list.add(item);
  const timer = (list as unknown as { timer: NodeJS.Timeout }).timer;
  t.false(timer.hasRef());
  DeadlineList.remove(item);
});
