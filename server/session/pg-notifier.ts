import 'server-only';
import pg from 'pg';
import { sleep } from '~/lib/sleep';
import { errorFields, logger } from '~/server/log';
import type { LiveDelta } from '~/lib/events';
import { livePayload, livePieces, mergeDeltas, parseLivePayload } from '~/server/session/live-payloads';
import { InProcessNotifier, type LiveRelay, type Notifier } from '~/server/session/notifier';

const log = logger('pg-notifier');

export const DEFAULT_CHANNEL = 'paddock_events';
/** Sent to every subscriber when the notifier cannot know which sessions changed. */
export const ANY_SEQ = Number.MAX_SAFE_INTEGER;
/** Hints per pg_notify round trip: one statement, far below any parameter or payload limit. */
const SEND_BATCH = 500;
const QUERY_TIMEOUT_MS = 5_000;
/** Deltas waiting while a send is under way; beyond this the oldest are dropped (they are stale). */
const LIVE_QUEUE_MAX = 5_000;

export interface PgNotifierOptions {
  /** Connection string of the database whose channel carries the hints. */
  url: string;
  /**
   * Every server instance sharing sessions must use the same channel. Live deltas use a second
   * channel named after it (`<channel>_live`).
   */
  channel?: string;
  /**
   * Safety net, in ms (0 turns it off): every subscriber gets a hint this often, so a notification
   * lost for good (the sender died between its commit and its pg_notify) delays a follower by at
   * most this much, instead of until the session's next event. The LISTEN connection is also
   * checked at this pace.
   */
  sweepMs?: number;
  /**
   * First and longest wait between attempts to re-establish a dropped LISTEN connection (default
   * 50 ms and 1 s: followers on other instances hear of new events at most ~1 s after a database
   * restart; an attempt is one cheap connect).
   */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * Opens a Notifier over PostgreSQL LISTEN/NOTIFY; resolves once it listens (and fails if the
 * database cannot be reached then). Later connection losses are repaired in the background.
 */
export function openPgNotifier(options: PgNotifierOptions): Promise<PgNotifier> {
  return PgNotifier.open(options);
}

/**
 * Wake-up hints shared by every server instance on one database. A hint is the NOTIFY payload
 * `session_id:seq` on one channel; one dedicated connection per process LISTENs and fans hints out
 * to the local subscribers. Subscribers in this process get a hint at once, without the round trip.
 *
 * notify() is called by the store after its commit, and the NOTIFY is sent then, on the LISTEN
 * connection (not inside the append's transaction), so the store stays unaware of the transport.
 * Hints queued while one send is in flight or while the connection is down are coalesced per
 * session (highest seq) and sent as one statement. Since followers re-read the log from their own
 * cursor, a lost, late or repeated hint only delays; after a reconnect every subscriber is woken,
 * as notifications sent meanwhile were missed.
 */
export class PgNotifier implements Notifier, LiveRelay {
  readonly #options: Required<PgNotifierOptions>;
  readonly #liveChannel: string;
  /** This process's deltas not yet sent, in order. */
  #liveOut: LiveDelta[] = [];
  /** Numbers each payload: PostgreSQL folds identical payloads of one statement into one. */
  #liveSeq = 0;
  readonly #liveListeners = new Set<(delta: LiveDelta) => void>();
  /** This process's subscribers; the LISTEN connection and own notifies feed them. */
  readonly #local = new InProcessNotifier();
  /** Hints not yet sent to the database: session id → highest seq. */
  readonly #pending = new Map<string, number>();
  readonly #closing = new AbortController();
  #client: pg.Client | null = null;
  #pid: number | null = null;
  /** The send under way, if any. */
  #sending: Promise<void> | null = null;
  #pinging = false;
  #reconnecting = false;
  #sweep: NodeJS.Timeout | null = null;

  static async open(options: PgNotifierOptions): Promise<PgNotifier> {
    const notifier = new PgNotifier(options);
    try {
      await notifier.#connect();
    } catch (e) {
      await notifier.close();
      throw e;
    }
    return notifier;
  }

  private constructor(options: PgNotifierOptions) {
    this.#options = { channel: DEFAULT_CHANNEL, sweepMs: 10_000, minBackoffMs: 50, maxBackoffMs: 1_000, ...options };
    this.#liveChannel = `${this.#options.channel}_live`;
    if (this.#options.sweepMs > 0) {
      this.#sweep = setInterval(() => {
        this.#hintAll();
        this.#heartbeat();
      }, this.#options.sweepMs);
      // A timer must not keep a process alive that has nothing else to do.
      this.#sweep.unref();
    }
  }

  /** Backend pid of the LISTEN connection, or null while it is down (for tests and operators). */
  get listenerPid(): number | null {
    return this.#pid;
  }

  /** Number of sessions with at least one local subscriber (for tests and leak checks). */
  get subscribedSessions(): number {
    return this.#local.subscribedSessions;
  }

  notify(sessionId: string, seq: number): void {
    this.#deliver(sessionId, seq);
    if (this.#closing.signal.aborted) return;
    this.#pending.set(sessionId, Math.max(seq, this.#pending.get(sessionId) ?? 0));
    this.#flush();
  }

  subscribe(sessionId: string, onHint: (seq: number) => void): () => void {
    return this.#local.subscribe(sessionId, onHint);
  }

  /** The same LISTEN connection carries the instances' live deltas. */
  get relay(): LiveRelay {
    return this;
  }

  publishLive(delta: LiveDelta): void {
    // Without a connection the delta is dropped, not queued: by the time it is back it is stale.
    if (this.#closing.signal.aborted || !this.#client) return;
    for (const piece of livePieces(delta)) {
      // While a send is under way, a token joins the one queued before it: fewer NOTIFYs under
      // load, the same text in the end.
      const merged = this.#liveOut.length > 0 ? mergeDeltas(this.#liveOut[this.#liveOut.length - 1]!, piece) : null;
      if (merged) this.#liveOut[this.#liveOut.length - 1] = merged;
      else this.#liveOut.push(piece);
    }
    if (this.#liveOut.length > LIVE_QUEUE_MAX) this.#liveOut.splice(0, this.#liveOut.length - LIVE_QUEUE_MAX);
    this.#flush();
  }

  subscribeLive(onDelta: (delta: LiveDelta) => void): () => void {
    const entry = (d: LiveDelta) => onDelta(d);
    this.#liveListeners.add(entry);
    return () => this.#liveListeners.delete(entry);
  }

  /** Opens the LISTEN connection: once on open, then from the reconnect loop. */
  async #connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.#options.url,
      application_name: 'paddock-listen',
      keepAlive: true,
      // Client-side: a query unanswered this long means the link is gone (see #heartbeat).
      query_timeout: QUERY_TIMEOUT_MS,
    });
    // Without an 'error' listener a dropped connection would crash the process.
    client.on('error', (e) => this.#dropped(client, e));
    client.on('end', () => this.#dropped(client, new Error('connection ended')));
    client.on('notification', (n) => {
      // Our own NOTIFYs come back too; local subscribers already had them.
      if (n.processId === this.#pid || n.payload === undefined) return;
      if (n.channel === this.#liveChannel) {
        const delta = parseLivePayload(n.payload);
        if (delta) for (const onDelta of [...this.#liveListeners]) onDelta(delta);
        return;
      }
      if (n.channel !== this.#options.channel) return;
      const hint = parseHint(n.payload);
      if (hint) this.#deliver(hint.sessionId, hint.seq);
    });
    try {
      await client.connect();
      await client.query(`listen ${client.escapeIdentifier(this.#options.channel)}; listen ${client.escapeIdentifier(this.#liveChannel)}`);
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      if (this.#closing.signal.aborted) throw new Error('notifier closed');
      this.#client = client;
      this.#pid = rows[0]?.pid ?? null;
    } catch (e) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw e;
    }
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    if (this.#sweep) clearInterval(this.#sweep);
    // Hints already queued still go out: other instances' followers are waiting for them.
    await this.#sending;
    const client = this.#client;
    this.#client = null;
    this.#pid = null;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }

  #deliver(sessionId: string, seq: number): void {
    this.#local.notify(sessionId, seq);
  }

  #hintAll(): void {
    for (const sessionId of this.#local.sessions()) this.#deliver(sessionId, ANY_SEQ);
  }

  /** Sends the pending hints unless a send is already under way (which picks them up). */
  #flush(): void {
    if (this.#sending) return;
    this.#sending = this.#send().then((drained) => {
      this.#sending = null;
      // Hints queued between the last check and now would otherwise wait for the next notify.
      if (drained && (this.#pending.size > 0 || this.#liveOut.length > 0)) this.#flush();
    });
  }

  /**
   * Sends pending hints, one statement at a time. True when it ran out of hints; false when the
   * connection is down or failed (the reconnect loop flushes once it is back).
   */
  async #send(): Promise<boolean> {
    while (this.#pending.size > 0 || this.#liveOut.length > 0) {
      const client = this.#client;
      if (!client) return false;
      // Deltas first: those of a model answer precede the hint of its commit, and a follower on
      // another instance then sees the preview before the stored message. Deltas that fail to go
      // out are dropped (stale by the time the connection is back); hints are queued again.
      if (this.#liveOut.length > 0) {
        const live = this.#liveOut.splice(0, SEND_BATCH).map((d) => livePayload(++this.#liveSeq, d));
        if (!(await this.#notifyAll(client, this.#liveChannel, live))) return false;
        continue;
      }
      const batch = [...this.#pending].slice(0, SEND_BATCH);
      for (const [sessionId] of batch) this.#pending.delete(sessionId);
      if (
        !(await this.#notifyAll(
          client,
          this.#options.channel,
          batch.map(([sessionId, seq]) => `${sessionId}:${seq}`),
        ))
      ) {
        for (const [sessionId, seq] of batch) this.#pending.set(sessionId, Math.max(seq, this.#pending.get(sessionId) ?? 0));
        return false;
      }
    }
    return true;
  }

  /** One statement sending every payload on the channel; false (and the connection dropped) if it fails. */
  async #notifyAll(client: pg.Client, channel: string, payloads: string[]): Promise<boolean> {
    try {
      await client.query('select pg_notify($1, p) from unnest($2::text[]) as p', [channel, payloads]);
      return true;
    } catch (e) {
      // A connection that fails a query is not trusted to deliver notifications either.
      this.#dropped(client, e instanceof Error ? e : new Error(String(e)));
      return false;
    }
  }

  /**
   * A LISTEN connection can die silently (a half-open TCP link after a failover): the next query
   * on it times out, and it is replaced like any dropped one.
   */
  #heartbeat(): void {
    const client = this.#client;
    if (!client || this.#pinging) return;
    this.#pinging = true;
    void client
      .query('select 1')
      .catch((e: unknown) => this.#dropped(client, e instanceof Error ? e : new Error(String(e))))
      .finally(() => {
        this.#pinging = false;
      });
  }

  #dropped(client: pg.Client, e: Error): void {
    // Both 'error' and 'end' fire for one loss; only the current connection matters.
    if (client !== this.#client) return;
    this.#client = null;
    this.#pid = null;
    this.#liveOut = [];
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    log.warn('LISTEN connection lost; reconnecting', errorFields(e));
    // Followers sleeping until the next hint re-read now: if the database is gone they learn it
    // (StoreUnavailableError) instead of sleeping through the outage; if not, they lose nothing.
    this.#hintAll();
    void this.#reconnect();
  }

  async #reconnect(): Promise<void> {
    if (this.#reconnecting) return;
    this.#reconnecting = true;
    const { minBackoffMs, maxBackoffMs } = this.#options;
    let delay = minBackoffMs;
    try {
      while (!this.#closing.signal.aborted) {
        // Jitter, so instances that lost the database together do not return in lockstep.
        await sleep(delay * (0.8 + Math.random() * 0.4), this.#closing.signal).catch(() => undefined);
        if (this.#closing.signal.aborted) return;
        try {
          await this.#connect();
        } catch (e) {
          log.warn('LISTEN reconnect failed', { ...errorFields(e), retryInMs: delay });
          delay = Math.min(delay * 2, maxBackoffMs);
          continue;
        }
        log.info('LISTEN connection re-established', { pid: this.#pid });
        this.#hintAll();
        this.#flush();
        return;
      }
    } finally {
      this.#reconnecting = false;
    }
  }
}

function parseHint(payload: string): { sessionId: string; seq: number } | null {
  const colon = payload.lastIndexOf(':');
  if (colon <= 0) return null;
  const seq = Number(payload.slice(colon + 1));
  return Number.isSafeInteger(seq) ? { sessionId: payload.slice(0, colon), seq } : null;
}
