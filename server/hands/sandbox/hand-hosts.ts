import 'server-only';
import { HandHost } from '~/server/hands/sandbox/hand-host';
import { type HandNetwork, networkKey } from '~/server/hands/sandbox/host-wire';

/** A launcher with no hand for this long is ended; the next hand of its policy starts another. */
const IDLE_MS = 60_000;

/**
 * The shared launchers of one provisioner, one per network policy in use (host-wire.ts): made on
 * a policy's first hand, ended after a minute without hands, made again when one has died.
 */
export class HandHosts {
  private readonly hosts = new Map<string, { host: HandHost; idle?: NodeJS.Timeout }>();

  constructor(private readonly opts: { launcher?: string; hostPath?: string; tools?: string } = {}) {}

  /** The launcher for this network policy, started if there is none alive. */
  for(network: HandNetwork, launcher?: string, tools?: string): HandHost {
    const key = networkKey(network);
    const entry = this.hosts.get(key);
    if (entry?.host.alive) {
      clearTimeout(entry.idle);
      entry.idle = undefined;
      return entry.host;
    }
    const host = new HandHost(network, { ...this.opts, ...(launcher ? { launcher } : {}), ...(tools ? { tools } : {}) });
    this.hosts.set(key, { host });
    void host.exited.then(() => {
      if (this.hosts.get(key)?.host === host) this.hosts.delete(key);
    });
    return host;
  }

  /** Called when one of `host`'s hands has ended: a launcher left without hands ends after a while. */
  released(host: HandHost): void {
    const entry = this.hosts.get(host.key);
    if (!entry || entry.host !== host || host.size > 0) return;
    clearTimeout(entry.idle);
    entry.idle = setTimeout(() => {
      if (host.size === 0 && this.hosts.get(host.key) === entry) {
        this.hosts.delete(host.key);
        void host.close();
      }
    }, IDLE_MS);
    entry.idle.unref();
  }

  /** Ends every launcher (and so every hand on them). */
  async close(): Promise<void> {
    const all = [...this.hosts.values()];
    this.hosts.clear();
    await Promise.all(all.map((e) => (clearTimeout(e.idle), e.host.close())));
  }
}
