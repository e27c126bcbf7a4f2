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
}

export async function startBrowserEngine(opts: StartBrowserEngineOptions): Promise<BrowserEngine> {
  let why: string;
  if (opts.prefer === 'offline') why = 'offline engine: requested';
  else if (!globalThis.crossOriginIsolated && !opts.ignoreIsolation && opts.prefer !== 'webcontainer') {
    why = 'offline engine: this page is not cross-origin isolated (WebContainer needs COOP and COEP headers)';
  } else {
    opts.onStatus?.('booting WebContainer…');
    try {
      const { startWebContainerEngine } = await import('~/lib/browser/engine/webcontainer-engine');
      return await startWebContainerEngine(opts);
    } catch (e) {
      // prefer: 'webcontainer' forces it: no fallback.
      if (opts.prefer === 'webcontainer') throw e;
      why = `offline engine: ${(e as Error).message}`;
    }
  }
  opts.onStatus?.('starting offline engine…');
  const { startOfflineEngine } = await import('~/lib/browser/engine/offline/offline-engine');
  return startOfflineEngine({ ...opts, reason: why });
}
