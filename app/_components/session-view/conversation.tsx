'use client';
import { useEffect, useRef, useState } from 'react';
import type { ToolResultContent } from '~/lib/events';
import { unreachable } from '~/lib/unreachable';
import { type Item, awaitsConfirmation } from '~/app/_components/session-view/derive';
import { ToolConfirmation } from '~/app/_components/session-view/tool-confirmation';
import type { Streaming } from '~/app/_components/session-view/use-session-log';

function resultText(content: readonly ToolResultContent[] | undefined): string {
  return (content ?? []).map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
}

/** Items rendered at first; older ones load on demand (a long session paints instantly). */
const WINDOW = 80;

export function Conversation({ sessionId, items, streaming }: { sessionId: string; items: Item[]; streaming: Streaming }) {
  const [all, setAll] = useState(false);
  const shown = all || items.length <= WINDOW ? items : items.slice(-WINDOW);
  const ref = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  // Follow new output while the reader is at the bottom; leave them alone once they scroll up.
  useEffect(() => {
    const el = ref.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  });
  return (
    <div
      className="conversation"
      data-testid="conversation"
      ref={ref}
      onScroll={(e) => {
        const el = e.currentTarget;
        pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }}
    >
      {shown.length < items.length && (
        <button type="button" className="small more" onClick={() => setAll(true)}>
          show {items.length - shown.length} earlier messages
        </button>
      )}
      {shown.map((item) => (
        <ItemView key={item.kind === 'tool' || item.kind === 'custom' ? item.call.use.id : item.event.id} sessionId={sessionId} item={item} />
      ))}
      {Object.entries(streaming).map(([startId, s]) => (
        <div key={startId} className="msg agent streaming" data-testid="streaming">
          <div className="who">agent · streaming…</div>
          {s.thinking && <pre className="thinking">{s.thinking}</pre>}
          <div className="text">{s.text}</div>
          {s.tools.length > 0 && <div className="muted small">preparing {s.tools.join(', ')}…</div>}
        </div>
      ))}
    </div>
  );
}

function ItemView({ sessionId, item }: { sessionId: string; item: Item }) {
  switch (item.kind) {
    case 'user':
      return (
        <div className="msg user">
          <div className="who">you</div>
          <div className="text" data-testid="user-message">{item.event.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n')}</div>
        </div>
      );
    case 'agent':
      return (
        <div className="msg agent">
          <div className="who">agent</div>
          <div className="text" data-testid="agent-message">{item.event.content.map((c) => (c.type === 'text' ? c.text : '[redacted]')).join('\n')}</div>
        </div>
      );
    case 'thinking':
      return (
        <details className="msg thinking">
          <summary>thinking</summary>
          <pre>{(item.event.content ?? []).map((c) => c.thinking).join('\n')}</pre>
        </details>
      );
    case 'tool': {
      const { use, result } = item.call;
      const hand = (result?.type === 'agent.tool_result' ? result.hand : undefined) ?? use.hand;
      const bash = use.name === 'bash' && typeof use.input.command === 'string';
      const asking = awaitsConfirmation(item.call);
      return (
        <div className={`tool ${result?.is_error ? 'tool-error' : ''}`} data-testid="tool-call">
          <div className="tool-head">
            <span className="mono">{use.name}</span>
            {hand && (
              <span className="muted small" data-testid="tool-hand">
                on {hand}
              </span>
            )}
            <span className="muted small">{result ? (result.is_error ? 'failed' : 'done') : asking ? 'waiting for your approval' : 'running…'}</span>
          </div>
          {bash ? (
            <pre className="terminal">
              <span className="prompt">$ </span>
              {String(use.input.command)}
              {result ? '\n' : ''}
              {result && <span data-testid="tool-result">{resultText(result.content)}</span>}
            </pre>
          ) : (
            <>
              <pre className="tool-input">{JSON.stringify(use.input, null, 2)}</pre>
              {result && (
                <pre className="tool-result" data-testid="tool-result">
                  {resultText(result.content)}
                </pre>
              )}
            </>
          )}
          {use.evaluated_permission === 'ask' && <ToolConfirmation sessionId={sessionId} call={item.call} />}
        </div>
      );
    }
    case 'custom': {
      const { use, result } = item.call;
      return (
        <div className={`tool tool-custom ${result?.is_error ? 'tool-error' : ''}`} data-testid="custom-tool-call">
          <div className="tool-head">
            <span className="mono">{use.name}</span>
            <span className="muted small">custom tool</span>
            <span className="muted small">{result ? (result.is_error ? 'failed' : 'done') : "waiting for the client's result"}</span>
          </div>
          <pre className="tool-input">{JSON.stringify(use.input, null, 2)}</pre>
          {result && (
            <pre className="tool-result" data-testid="custom-tool-result">
              {resultText(result.content)}
            </pre>
          )}
        </div>
      );
    }
    case 'interrupt':
      return <div className="notice">interrupted</div>;
    case 'error':
      return (
        <div className="notice error" data-testid="session-error">
          {item.event.error.type}: {item.event.error.message} ({item.event.error.retry_status.type})
        </div>
      );
    case 'rescheduled':
      return (
        <div className="notice muted">
          model unavailable; retry {item.event.attempt ?? ''} in {Math.round((item.event.retry_in_ms ?? 0) / 100) / 10}s
        </div>
      );
    default:
      return unreachable(item);
  }
}
