import 'client-only';
import { rememberedWebContainerFailure } from '~/lib/browser/engine/start-engine';

/**
 * WebContainer needs a cross-origin isolated page, and only a full page load of the session page
 * gets its COOP/COEP headers: a page reached by an in-app (client-side) navigation is not
 * isolated. The tab hand then reloads the page once, rather than settle for the offline engine.
 * The time of that reload is kept for this tab, so a page that stays unisolated after it (a proxy
 * that strips the headers, a browser without isolation) falls back instead of reloading forever.
 */
const KEY = 'paddock.isolationReloadAt';
const WINDOW_MS = 60_000;

function reloadedAt(): number {
  try {
    return Number(sessionStorage.getItem(KEY)) || 0;
  } catch {
    return 0;
  }
}

/** Whether this page load came from such a reload (moments ago). */
export function reloadedForIsolation(now = Date.now()): boolean {
  const at = reloadedAt();
  return at > 0 && now - at < WINDOW_MS;
}

/** Whether the tab hand should reload the page before it starts: WebContainer would be tried, and cannot be on this page as loaded. */
export function shouldReloadForIsolation(now = Date.now()): boolean {
  if (globalThis.crossOriginIsolated) return false;
  let prefer: string | null;
  try {
    prefer = localStorage.getItem('paddock.engine');
  } catch {
    return false; // no storage: nothing would survive the reload either
  }
  // The offline engine asked for, or WebContainer known not to boot here: it would not be tried.
  if (prefer === 'offline' || (prefer !== 'webcontainer' && rememberedWebContainerFailure())) return false;
  return !reloadedForIsolation(now);
}

export function reloadForIsolation(): void {
  try {
    sessionStorage.setItem(KEY, String(Date.now()));
  } catch {
    return; // without the mark a reload could loop: stay on the offline engine
  }
  window.location.reload();
}

/** What the tab hand says while it reloads the page. */
export const RELOAD_NOTICE = 'Reloading this page once: WebContainer needs the page loaded whole (cross-origin isolated), and this one was opened by an in-app link.';
