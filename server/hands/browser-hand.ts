import 'server-only';
import type { StoredEvent } from '~/lib/events';
import { type ExecuteContext, type Hand, type ToolSpec, ToolError } from '~/lib/hand';
import { BRAIN_TOOLS, isHandTool } from '~/lib/tools';
import { sleep } from '~/lib/sleep';
import type { EventLog, SessionRows, TabClaims } from '~/server/session/store';

export interface BrowserHandOptions {
  /** A browser hand needs the log and the tab claims, not leases. */
  store: EventLog & TabClaims & Pick<SessionRows, 'getSession'>;
  sessionId: string;
  /** No heartbeat from any tab for this long: the hand is lost. */
  heartbeatTimeoutMs?: number;
  /** A call nobody claims within this long fails (and the hand is treated as lost). */
  claimTimeoutMs?: number;
  /** A claimed call whose tab does not answer within this long fails, naming the hand. */
  callTimeoutMs?: number;
  engine: string;
}

/**
 * The hand that lives in the user's browser tab(s). The server never reaches into the tab: the
 * call is already in the log (`agent.tool_use` addressed to this hand); a live tab claims it,
 * runs it in its engine and posts `user.tool_result`, stored once per `tool_use_id` (the same
 * idempotency key the harness uses, so the harness's own result write is a no-op).
 *
 * Which tabs are alive and which tab runs a call live in the store, not in this object: a tab's
 * requests may reach one server instance while the harness runs on another, and a restarted
 * server picks the hand up again as long as its tabs keep beating.
 */
export class BrowserHand implements Hand {
  readonly kind = 'browser' as const;
  readonly lost: Promise<string>;
  private markLost!: (reason: string) => void;
  /** Claims granted through this instance: a waiting call hears of them without polling. */
  private readonly claimWaiters = new Map<string, () => void>();
  private readonly timer: NodeJS.Timeout;
  private readonly timeout: number;
  private checking = false;
  private gone: string | null = null;

  constructor(
    readonly id: string,
    private readonly o: BrowserHandOptions,
  ) {
    this.lost = new Promise((resolve) => {
      this.markLost = (reason) => {
        if (this.gone) return;
        this.gone = reason;
        clearInterval(this.timer);
        resolve(reason);
      };
    });
    this.timeout = o.heartbeatTimeoutMs ?? 6_000;
    this.timer = setInterval(() => void this.checkTabs(), Math.min(1_000, this.timeout / 3));
    this.timer.unref();
  }

  get engine(): string {
    return this.o.engine;
  }

  /** A tab joins (or keeps) this hand. False once the hand is lost: the tab must register anew. */
  async heartbeat(tabId: string): Promise<boolean> {
    if (this.gone) return false;
    await this.o.store.touchTab(this.o.sessionId, this.id, tabId);
    return !this.gone;
  }

  /** Exactly one tab runs each call: the first to claim it, whichever instance it asked. */
  async claim(callId: string, tabId: string): Promise<boolean> {
    if (this.gone) return false;
    const holder = await this.o.store.claimCall(this.o.sessionId, callId, tabId);
    if (holder === tabId) this.claimWaiters.get(callId)?.();
    return holder === tabId;
  }

  tools(): Promise<ToolSpec[]> {
    return Promise.resolve(BRAIN_TOOLS.filter((t) => isHandTool(t.name)));
  }

  async execute(name: string, _input: unknown, ctx: ExecuteContext): Promise<string> {
    if (!isHandTool(name)) throw new ToolError(`unknown tool ${name}`);
    if (this.gone) throw new ToolError(`hand ${this.id} is lost: ${this.gone}`);
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await Promise.race([this.awaitResult(ctx.callId, stop.signal), this.awaitClaim(ctx.callId, stop.signal)]);
    } finally {
      stop.abort();
      ctx.signal.removeEventListener('abort', onAbort);
      this.claimWaiters.delete(ctx.callId);
    }
  }

  close(): Promise<void> {
    this.markLost('released');
    return Promise.resolve();
  }

  /** No tab has beaten within the timeout: the hand is lost. A store error decides nothing. */
  private async checkTabs(): Promise<void> {
    if (this.checking || this.gone) return;
    this.checking = true;
    try {
      const live = await this.o.store.liveTabs(this.o.sessionId, this.id, this.timeout);
      if (live.length === 0) this.markLost(`no live browser tab (no heartbeat for ${Math.round(this.timeout / 1000)} s)`);
    } catch {
      // Unreachable store: the next check decides.
    } finally {
      this.checking = false;
    }
  }

  /**
   * Rejects if no tab claims the call in time, or if the tab that claimed it does not answer
   * within the call deadline (a tab whose result POST never arrives must not hold the session
   * running forever); never resolves otherwise.
   */
  private async awaitClaim(callId: string, signal: AbortSignal): Promise<never> {
    const ms = this.o.claimTimeoutMs ?? 10_000;
    const deadline = Date.now() + ms;
    const heard = new Promise<void>((resolve) => this.claimWaiters.set(callId, resolve));
    // A claim made through another instance is only seen in the store: look every 200 ms.
    while (!signal.aborted) {
      if ((await this.o.store.callClaim(this.o.sessionId, callId).catch(() => null)) !== null) return this.answerDeadline(signal);
      const left = deadline - Date.now();
      if (left <= 0) break;
      const claimed = await Promise.race([heard.then(() => true), sleep(Math.min(200, left), signal).then(() => false, () => false)]);
      if (claimed) return this.answerDeadline(signal);
    }
    if (signal.aborted) return new Promise<never>(() => undefined);
    const reason = `no live browser tab picked up the call within ${Math.round(ms / 1000)} s`;
    this.markLost(reason);
    throw new Error(`hand ${this.id}: ${reason}`);
  }

  private async answerDeadline(signal: AbortSignal): Promise<never> {
    const ms = this.o.callTimeoutMs ?? 15 * 60_000;
    await sleep(ms, signal).catch(() => undefined);
    if (signal.aborted) return new Promise<never>(() => undefined);
    throw new ToolError(`hand ${this.id}: the browser tab that took the call did not answer within ${Math.round(ms / 1000)} s`);
  }

  /** The tab's `user.tool_result`, read from the log (so it also works after a reconnect). */
  private async awaitResult(callId: string, signal: AbortSignal): Promise<string> {
    // The tab may have answered before this call started: look back first, then follow.
    const session = await this.o.store.getSession(this.o.sessionId);
    const upTo = session?.last_seq ?? 0;
    const earlier = await this.o.store.getEvents(this.o.sessionId, { to: Math.max(1, upTo), types: ['user.tool_result'] });
    const done = earlier.find((e) => e.type === 'user.tool_result' && e.tool_use_id === callId);
    if (done?.type === 'user.tool_result') return resultText(done);
    for await (const e of this.o.store.follow(this.o.sessionId, upTo, signal)) {
      if (e.type === 'user.tool_result' && e.tool_use_id === callId) return resultText(e);
    }
    throw new Error('aborted');
  }
}

function resultText(e: Extract<StoredEvent, { type: 'user.tool_result' }>): string {
  const text = (e.content ?? []).map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
  if (e.is_error) throw new ToolError(text);
  return text;
}
