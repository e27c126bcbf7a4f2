import 'client-only';
import type { BrowserEngine, StartEngineOptions } from '~/lib/browser/engine/types';

/**
 * Starts the browser hand's engine: the WebContainer when the page can run it, else the offline
 * engine, with `reason` saying which one runs and why. Both engines are loaded with dynamic
 * imports, so neither (nor the worker, nor QuickJS) is in a page's bundle until a hand starts.
 */

export interface StartBrowserEngineOptions extends StartEngineOptions {
  /**
   * Try WebContainer.boot() even when the page is not cross-origin isolated. Only for tests of
   * the boot timeout: on such a page boot inserts StackBlitz's iframe and waits forever.
   */
  ignoreIsolation?: boolean;
  /** This page was already reloaded once to be isolated (the reason then says the headers did not arrive). */
  reloadedForIsolation?: boolean;
}

/**
 * A WebContainer that failed to boot in this browser is not tried again on every page load (each
 * try waits for its timeout): the failure is remembered per browser (and origin) for a week, until
 * `forgetWebContainerFailure()` (the hand's "try WebContainer again").
 */
const FAILED_KEY = 'paddock.webcontainer-failed';
const REMEMBER_MS = 7 * 24 * 3600_000;

export function rememberedWebContainerFailure(): { at: number; reason: string } | null {
  try {
    const raw = localStorage.getItem(FAILED_KEY);
    if (!raw) return null;
    const v = JSON.parse(raw) as { at?: unknown; reason?: unknown };
    if (typeof v.at !== 'number' || typeof v.reason !== 'string' || Date.now() - v.at > REMEMBER_MS) return null;
    return { at: v.at, reason: v.reason };
  } catch {
    return null;
  }
}

export function forgetWebContainerFailure(): void {
  try {
    localStorage.removeItem(FAILED_KEY);
  } catch {
    // storage off: nothing was remembered
  }
}

function rememberWebContainerFailure(reason: string): void {
  try {
    localStorage.setItem(FAILED_KEY, JSON.stringify({ at: Date.now(), reason }));
  } catch {
    // storage off: it is tried again next time
  }
}

export async function startBrowserEngine(opts: StartBrowserEngineOptions): Promise<BrowserEngine> {
  let why: string;
  const failed = opts.prefer === 'webcontainer' ? null : rememberedWebContainerFailure();
  if (opts.prefer === 'offline') why = 'offline engine: requested';
  else if (!globalThis.crossOriginIsolated && !opts.ignoreIsolation && opts.prefer !== 'webcontainer') {
    why = opts.reloadedForIsolation
      ? 'offline engine: this page is not cross-origin isolated even loaded whole (its COOP and COEP headers did not arrive: a proxy may strip them)'
      : 'offline engine: this page is not cross-origin isolated (WebContainer needs COOP and COEP headers)';
  } else if (failed) {
    why = `offline engine: WebContainer did not boot in this browser last time (${failed.reason}), so it is not tried again for now`;
  } else {
    opts.onStatus?.('booting WebContainer…');
    try {
      const { startWebContainerEngine } = await import('~/lib/browser/engine/webcontainer-engine');
      const engine = await startWebContainerEngine(opts);
      forgetWebContainerFailure();
      return engine;
    } catch (e) {
      // prefer: 'webcontainer' forces it: no fallback.
      if (opts.prefer === 'webcontainer') throw e;
      rememberWebContainerFailure((e as Error).message);
      why = `offline engine: ${(e as Error).message}`;
    }
  }
  opts.onStatus?.('starting offline engine…');
  const { startOfflineEngine } = await import('~/lib/browser/engine/offline/offline-engine');
  return startOfflineEngine({ ...opts, reason: why });
}
