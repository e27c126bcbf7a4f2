'use client';
import '~/app/_components/session-view/outage-note.css';
import { forgetWebContainerFailure, rememberedWebContainerFailure } from '~/lib/browser/engine/start-engine';
import type { BrowserHandState } from '~/lib/browser/use-browser-hand';

/** What is down while the page shows the session: the server itself, or only its database. */
export type Outage = 'server' | 'database' | null;

/**
 * "Use this tab as a hand" and what the tab hand is doing: which engine runs and why, previews,
 * and during an outage what that means for it. A secondary button: Send is the page's primary
 * action. Not offered at all for a session that has ended or is archived.
 */
export function TabHandControl({ browser, enabled, onToggle, offered, outage }: { browser: BrowserHandState; enabled: boolean; onToggle: () => void; offered: boolean; outage: Outage }) {
  if (!offered) return null;
  return (
    <div className="browser-hand" data-testid="browser-hand" data-engine={browser.engine?.kind ?? ''}>
      <button type="button" data-testid="browser-hand-toggle" onClick={onToggle}>
        {enabled ? 'Stop using this tab' : 'Use this tab as a hand'}
      </button>
      {enabled && (
        <div className="small muted" data-testid="browser-hand-status">
          {browser.engine ? (
            <>
              <strong data-testid="engine-kind">{browser.engine.kind === 'webcontainer' ? 'WebContainer' : 'offline engine'}</strong>
              {browser.hand ? ` · ${browser.hand}` : ''}
              <div data-testid="engine-reason">{browser.engine.reason}</div>
              {browser.engine.kind !== 'webcontainer' && rememberedWebContainerFailure() && (
                <button
                  type="button"
                  className="small"
                  data-testid="retry-webcontainer"
                  onClick={() => {
                    forgetWebContainerFailure();
                    window.location.reload();
                  }}
                >
                  Try WebContainer again
                </button>
              )}
            </>
          ) : outage === 'server' ? null : (
            browser.status
          )}
          {outage !== null && (
            <div className="outage-note" data-testid="browser-hand-outage">
              {outage === 'server'
                ? browser.engine
                  ? 'The server cannot be reached: this tab keeps its files, and serves the session again once the server is back.'
                  : 'The server cannot be reached: this tab starts as a hand once it is back.'
                : 'The database is unreachable: calls to this tab wait until it is back.'}
            </div>
          )}
          {browser.error && <div className="error">{browser.error}</div>}
          {Object.entries(browser.previews).map(([port, url]) => (
            <div key={port} data-testid="preview-url">
              preview :{port}{' '}
              <a href={url} target="_blank" rel="noreferrer">
                {url}
              </a>
            </div>
          ))}
        </div>
      )}
    </div>
  );
}
