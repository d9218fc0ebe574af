/**
 * Soak child (soak.ts): one fake JSON-RPC upstream (test/support/fake-upstream.ts) in its own
 * process, as each provider is its own machine. It tells the parent its URL, then takes
 * `{ profile, delayMs }` messages: the fault of the current phase.
 */
import { startFakeUpstream, type Profile } from '../support/fake-upstream.js';

const fake = await startFakeUpstream();
process.send!({ url: fake.url });
process.on('message', (m: { profile?: Profile; delayMs?: number; stop?: boolean }) => {
  if (m.stop) {
    void fake.close().then(() => process.exit(0));
    return;
  }
  if (m.profile) fake.profile = m.profile;
  if (m.delayMs !== undefined) fake.delayMs = m.delayMs;
  process.send!({ ok: true });
});
process.on('disconnect', () => void fake.close().then(() => process.exit(0)));
