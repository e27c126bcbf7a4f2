'use client';
import { TRPCClientError } from '@trpc/client';
import { type KeyboardEvent, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Markdown } from '~/app/_components/markdown/markdown';
import { conversation, currentStatus } from '~/app/_components/session-view/derive';
import type { StoredEvent } from '~/lib/events';
import { BUDGET_SPENT } from '~/lib/widget';
import { makeWidgetTrpcClient } from '~/lib/browser/trpc';
import { WidgetItem, itemKey } from '~/app/_components/widget/widget-item';
import { useHostFrame } from '~/app/_components/widget/use-host-frame';
import '~/app/_components/widget/widget.css';

type Theme = 'light' | 'dark';
interface Props {
  agentId: string;
  origin: string;
  theme: Theme;
}

/** Where this browser keeps its visitor token for one agent on one site (the frame's own storage). */
const storageKey = (agentId: string, origin: string) => `paddock.widget.${agentId}.${origin}`;

function readToken(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null; // storage blocked: the token lives in memory for this page
  }
}

function writeToken(key: string, token: string): void {
  try {
    window.localStorage.setItem(key, token);
  } catch {
    // as above
  }
}

const LIMIT_REACHED = { text: 'This conversation has reached its limit. Start a new one to go on.', ended: true };

/** A refusal as the visitor reads it. */
function sayRefusal(e: unknown): { text: string; ended: boolean } {
  const code = e instanceof TRPCClientError ? (e.data as { code?: string } | null)?.code : undefined;
  // Spent, or already ended at its limit (terminated).
  if (code === 'PRECONDITION_FAILED' || code === 'CONFLICT') return LIMIT_REACHED;
  if (code === 'TOO_MANY_REQUESTS') return { text: 'Too many messages at once: wait a minute and try again.', ended: false };
  if (code === 'PAYLOAD_TOO_LARGE') return { text: 'That message is too long: shorten it and send again.', ended: false };
  if (code === 'UNAUTHORIZED' || code === 'NOT_FOUND') return { text: 'This assistant is no longer available here.', ended: true };
  return { text: 'The message could not be sent. Try again in a moment.', ended: false };
}

/** Whether the server cut this conversation at its budget (the budget watch stores this notice). */
const budgetCut = (events: readonly StoredEvent[]) => events.some((e) => e.type === 'session.error' && e.error.message === BUDGET_SPENT);

/**
 * The docs widget: a compact chat with one agent for an anonymous visitor. Its visitor token (from
 * `widget.open`) is kept in the frame's own storage and sent as a header: third-party cookies are
 * blocked or partitioned by several browsers, a header is not (and cannot be sent by another site).
 */
export function WidgetApp({ agentId, origin, theme: initialTheme }: Props) {
  const key = storageKey(agentId, origin);
  const token = useRef<string | null>(null);
  const client = useMemo(() => makeWidgetTrpcClient(() => token.current), []);
  const [theme, setTheme] = useState<Theme>(initialTheme);
  const [ready, setReady] = useState(false);
  const [name, setName] = useState('Assistant');
  const [greeting, setGreeting] = useState('');
  const [suggestions, setSuggestions] = useState<string[]>([]);
  const [unavailable, setUnavailable] = useState<string | null>(null);
  const [sessionId, setSessionId] = useState<string | null>(null);
  const [events, setEvents] = useState<StoredEvent[]>([]);
  const [streaming, setStreaming] = useState<Record<string, string>>({});
  const [draft, setDraft] = useState('');
  const [sending, setSending] = useState(false);
  const [stopping, setStopping] = useState(false);
  const [notice, setNotice] = useState<{ text: string; ended: boolean } | null>(null);
  const input = useRef<HTMLTextAreaElement>(null);
  const bottom = useRef<HTMLDivElement>(null);

  // Open the widget: reuse this browser's token (a returning visitor) or take a new one, then the newest conversation.
  useEffect(() => {
    let cancelled = false;
    token.current = readToken(key);
    void (async () => {
      try {
        let opened;
        try {
          opened = await client.widget.open.mutate({ agentId, origin });
        } catch (e) {
          // A stale token (expired, or from a widget since turned off and on) is dropped and the visitor starts afresh.
          if (!(e instanceof TRPCClientError) || (e.data as { code?: string } | null)?.code !== 'UNAUTHORIZED' || token.current === null) throw e;
          token.current = null;
          opened = await client.widget.open.mutate({ agentId, origin });
        }
        if (opened.token) {
          token.current = opened.token;
          writeToken(key, opened.token);
        }
        const mine = await client.widget.sessions.query();
        if (cancelled) return;
        setName(opened.agent.name || 'Assistant');
        setGreeting(opened.greeting);
        setSuggestions(opened.suggested_questions);
        if (mine[0]) setSessionId(mine[0].id);
        setReady(true);
      } catch (e) {
        if (!cancelled) setUnavailable(sayRefusal(e).text);
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [agentId, origin, key, client]);

  // Follow the conversation: stored events, and the answer as it streams.
  useEffect(() => {
    if (!sessionId) return;
    setEvents([]);
    setStreaming({});
    let last = 0;
    const sub = client.events.follow.subscribe(
      { sessionId, afterSeq: 0 },
      {
        onData: (item) => {
          const value = 'data' in item && 'id' in item ? item.data : item;
          if (value.kind === 'event') {
            const e = value.event;
            if (e.seq <= last) return;
            last = e.seq;
            setEvents((prev) => [...prev, e]);
            if (e.type === 'span.model_request_end') {
              setStreaming((prev) => {
                const { [e.model_request_start_id]: _done, ...rest } = prev;
                return rest;
              });
            }
          } else if (value.kind === 'delta' && value.delta.kind === 'text') {
            const d = value.delta;
            setStreaming((prev) => ({ ...prev, [d.model_request_start_id]: (prev[d.model_request_start_id] ?? '') + d.text }));
          }
        },
        onError: (e) => setNotice(sayRefusal(e)),
      },
    );
    return () => sub.unsubscribe();
  }, [sessionId, client]);

  useHostFrame(origin, ready, input, setTheme);

  const items = useMemo(() => conversation(events), [events]);
  const status = useMemo(() => currentStatus(events), [events]);
  const live = Object.values(streaming).join('');

  useEffect(() => {
    bottom.current?.scrollIntoView({ block: 'end' });
  }, [items.length, live]);

  const send = useCallback(async (asked?: string) => {
    const text = (asked ?? draft).trim();
    if (!text || sending) return;
    setSending(true);
    setNotice(null);
    try {
      let id = sessionId;
      if (!id) {
        id = (await client.widget.create.mutate()).id;
        setSessionId(id);
      }
      await client.widget.send.mutate({ sessionId: id, text, idempotencyKey: `w-${crypto.randomUUID()}` });
      if (asked === undefined) setDraft('');
    } catch (e) {
      setNotice(sayRefusal(e));
    } finally {
      setSending(false);
      input.current?.focus();
    }
  }, [draft, sending, sessionId, client]);

  // Stop the running answer; the conversation stays open for the next message.
  const stop = useCallback(async () => {
    if (!sessionId || stopping) return;
    setStopping(true);
    try {
      await client.widget.stop.mutate({ sessionId });
    } catch (e) {
      setNotice(sayRefusal(e));
    } finally {
      setStopping(false);
      input.current?.focus();
    }
  }, [sessionId, stopping, client]);

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      void send();
    }
  };

  const startOver = () => {
    setSessionId(null);
    setEvents([]);
    setStreaming({});
    setNotice(null);
    input.current?.focus();
  };

  if (unavailable) {
    return (
      <main className={`pw pw-${theme}`} data-testid="widget-unavailable">
        <p className="pw-note">{unavailable}</p>
      </main>
    );
  }

  // A conversation ended at its limit shows so on reload, whatever else its log holds.
  const cut = budgetCut(events) || status === 'terminated';
  const shown = notice ?? (cut ? LIMIT_REACHED : null);
  const ended = shown?.ended ?? false;
  const running = status === 'running';
  return (
    <main className={`pw pw-${theme}`} data-testid="widget" data-theme={theme}>
      <header className="pw-head">
        <h1 className="pw-title">{name}</h1>
        <button type="button" className="pw-ghost" onClick={startOver} disabled={!sessionId} data-testid="widget-new">
          New conversation
        </button>
        <button type="button" className="pw-ghost" aria-label="Close" onClick={() => window.parent.postMessage({ type: 'paddock:close' }, origin)}>
          ✕
        </button>
      </header>
      <section className="pw-log" aria-live="polite" aria-busy={running} data-testid="widget-log">
        {items.length === 0 && !live && !ready && <p className="pw-note">Loading…</p>}
        {items.length === 0 && !live && ready && (
          <>
            {greeting ? (
              <div className="pw-msg pw-agent pw-greeting" data-testid="widget-greeting">
                {greeting}
              </div>
            ) : (
              <p className="pw-note">Ask {name} a question.</p>
            )}
            {suggestions.length > 0 && (
              <div className="pw-suggestions" role="group" aria-label="Suggested questions">
                {suggestions.map((q) => (
                  <button key={q} type="button" className="pw-suggestion" disabled={sending} onClick={() => void send(q)} data-testid="widget-suggestion">
                    {q}
                  </button>
                ))}
              </div>
            )}
          </>
        )}
        {items.map((item, i) => (
          <WidgetItem key={itemKey(item, i)} item={item} />
        ))}
        {live && (
          <div className="pw-msg pw-agent" data-testid="widget-streaming">
            <Markdown text={live} partial />
          </div>
        )}
        {running && !live && <p className="pw-note pw-typing">…</p>}
        <div ref={bottom} />
      </section>
      {shown && (
        <p className="pw-notice" role="status" data-testid="widget-notice">
          {shown.text}
        </p>
      )}
      <form
        className="pw-compose"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <label htmlFor="pw-input" className="pw-sr">
          Your message
        </label>
        <textarea
          id="pw-input"
          ref={input}
          rows={2}
          maxLength={4000}
          value={draft}
          placeholder={ended ? 'Start a new conversation to go on' : 'Ask a question…'}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={onKeyDown}
          disabled={!ready || ended}
          data-testid="widget-input"
        />
        {running && !ended && (
          // Beside Send (a message can still be queued meanwhile), as the owner's Interrupt is.
          <button type="button" className="pw-stop" onClick={() => void stop()} disabled={stopping} aria-label="Stop the answer" data-testid="widget-stop">
            <span aria-hidden="true" className="pw-stop-icon" /> Stop
          </button>
        )}
        <button type="submit" className="pw-send" disabled={!ready || ended || sending || draft.trim() === ''} data-testid="widget-send">
          Send
        </button>
      </form>
    </main>
  );
}
