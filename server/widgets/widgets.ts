import 'server-only';
import { SlidingWindow } from '~/server/widgets/rate-limit';
import { WidgetStore } from '~/server/widgets/widget-store';
import type { Kysely } from 'kysely';
import type { Database } from '~/server/session/schema';

/** New visitor tokens one IP address may be given an hour (each is a fresh visitor, with its own limits). */
export const VISITORS_PER_IP_PER_HOUR = 30;

/**
 * The widget's server side: the rows (settings, sessions) and this instance's rate-limit windows
 * (per visitor and per IP address, a minute; new visitors per IP, an hour).
 */
export class Widgets {
  readonly store: WidgetStore;
  readonly perMinute = new SlidingWindow(60_000);
  readonly perHour = new SlidingWindow(60 * 60_000);

  constructor(db: Kysely<Database>) {
    this.store = new WidgetStore(db);
  }

  /**
   * Counts one action (a message, a new conversation) against both the visitor's and its address's
   * minute: refused when either is spent (then nothing is counted for either).
   */
  takeAction(o: { agentId: string; visitor: string; ip: string; visitorPerMinute: number; ipPerMinute: number }, now = Date.now()): boolean {
    const v = `v:${o.agentId}:${o.visitor}`;
    const a = `ip:${o.agentId}:${o.ip}`;
    if (!this.perMinute.allows(v, o.visitorPerMinute, now) || !this.perMinute.allows(a, o.ipPerMinute, now)) return false;
    this.perMinute.take(v, o.visitorPerMinute, now);
    this.perMinute.take(a, o.ipPerMinute, now);
    return true;
  }

  /** A new visitor from this address: refused past VISITORS_PER_IP_PER_HOUR. */
  takeNewVisitor(ip: string, now = Date.now()): boolean {
    return this.perHour.take(`new:${ip}`, VISITORS_PER_IP_PER_HOUR, now);
  }
}
