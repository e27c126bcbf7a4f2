import 'server-only';
import type { StoredEvent } from '~/lib/events';
import { type ExecuteContext, type Hand, type ToolSpec, ToolError } from '~/lib/hand';
import { BRAIN_TOOLS, isHandTool } from '~/lib/tools';
import type { SessionStore } from '~/server/session/store';

export interface BrowserHandOptions {
  store: SessionStore;
  sessionId: string;
  /** No heartbeat from any tab for this long: the hand is lost. */
  heartbeatTimeoutMs?: number;
  /** A call nobody claims within this long fails (and the hand is treated as lost). */
  claimTimeoutMs?: number;
  engine: string;
}

/**
 * The hand that lives in the user's browser tab(s). The server never reaches into the tab: the
 * call is already in the log (`agent.tool_use` addressed to this hand); a live tab claims it,
 * runs it in its engine and posts `user.tool_result`, stored once per `tool_use_id` (the same
 * idempotency key the harness uses, so the harness's own result write is a no-op).
 */
export class BrowserHand implements Hand {
  readonly kind = 'browser' as const;
  readonly lost: Promise<string>;
  private markLost!: (reason: string) => void;
  private readonly tabs = new Map<string, number>();
  private readonly claims = new Map<string, string>();
  private readonly claimWaiters = new Map<string, () => void>();
  private readonly timer: NodeJS.Timeout;
  private gone: string | null = null;

  constructor(
    readonly id: string,
    private readonly o: BrowserHandOptions,
  ) {
    this.lost = new Promise((resolve) => {
      this.markLost = (reason) => {
        if (this.gone) return;
        this.gone = reason;
        resolve(reason);
      };
    });
    const timeout = o.heartbeatTimeoutMs ?? 6_000;
    this.timer = setInterval(() => {
      const now = Date.now();
      for (const [tab, last] of this.tabs) if (now - last > timeout) this.tabs.delete(tab);
      if (this.tabs.size === 0) this.markLost(`no live browser tab (no heartbeat for ${Math.round(timeout / 1000)} s)`);
    }, Math.min(1_000, timeout / 3));
    this.timer.unref();
  }

  get engine(): string {
    return this.o.engine;
  }

  /** A tab joins (or keeps) this hand. False once the hand is lost: the tab must register anew. */
  heartbeat(tabId: string): boolean {
    if (this.gone) return false;
    this.tabs.set(tabId, Date.now());
    return true;
  }

  /** Exactly one tab runs each call: the first to claim it. */
  claim(callId: string, tabId: string): boolean {
    if (this.gone || !this.tabs.has(tabId)) return false;
    const holder = this.claims.get(callId);
    if (holder) return holder === tabId;
    this.claims.set(callId, tabId);
    this.claimWaiters.get(callId)?.();
    return true;
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
    clearInterval(this.timer);
    this.markLost('released');
    return Promise.resolve();
  }

  /** Rejects if no tab claims the call in time; never resolves otherwise. */
  private awaitClaim(callId: string, signal: AbortSignal): Promise<never> {
    return new Promise((_resolve, reject) => {
      if (this.claims.has(callId)) return;
      const ms = this.o.claimTimeoutMs ?? 10_000;
      const t = setTimeout(() => {
        const reason = `no live browser tab picked up the call within ${Math.round(ms / 1000)} s`;
        this.markLost(reason);
        reject(new Error(`hand ${this.id}: ${reason}`));
      }, ms);
      this.claimWaiters.set(callId, () => clearTimeout(t));
      signal.addEventListener('abort', () => clearTimeout(t), { once: true });
    });
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
