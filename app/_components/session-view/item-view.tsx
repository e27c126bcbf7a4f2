'use client';
import type { ReactNode } from 'react';
import { useStickToBottomContext } from 'use-stick-to-bottom';
import type { StoredEventOf, ToolResultContent } from '~/lib/events';
import { useReadOnly } from '~/app/_components/session-view/read-only';
import { RetryButton } from '~/app/_components/session-view/retry-button';
import { errorText } from '~/app/_components/session-view/error-text';
import { unreachable } from '~/lib/unreachable';
import { Collapsible } from '~/app/_components/collapsible/collapsible';
import { CopyButton } from '~/app/_components/copy-button/copy-button';
import { Markdown } from '~/app/_components/markdown/markdown';
import { type Item, awaitsConfirmation, wasDenied } from '~/app/_components/session-view/derive';
import { ToolConfirmation } from '~/app/_components/session-view/tool-confirmation';

function resultText(content: readonly ToolResultContent[] | undefined): string {
  return (content ?? []).map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
}

/** Long text collapsed; opening it stops following new output, so the reader stays on what they opened. */
function Long({ text, render }: { text: string; render: (text: string, clipped: boolean) => ReactNode }) {
  const { stopScroll } = useStickToBottomContext();
  return <Collapsible text={text} render={render} onExpand={stopScroll} />;
}

function Who({ children, copy }: { children: ReactNode; copy: string }) {
  return (
    <div className="who">
      <span>{children}</span>
      <CopyButton text={copy} testId="copy-message" />
    </div>
  );
}

/** An answer being written: markdown healed as it grows, long ones collapsed like stored ones. */
const VERDICT_LABEL: Record<StoredEventOf<'span.outcome_evaluation_end'>['result'], string> = {
  satisfied: 'satisfied',
  needs_revision: 'needs revision',
  max_iterations_reached: 'out of iterations, still not met',
  failed: 'the rubric does not apply',
  interrupted: 'interrupted',
};

export function StreamingView({ text, thinking, tools }: { text: string; thinking: string; tools: string[] }) {
  return (
    <div className="msg agent streaming" data-testid="streaming">
      <div className="who">agent · streaming…</div>
      {thinking && <pre className="thinking">{thinking}</pre>}
      <Long text={text} render={(t) => <Markdown text={t} partial />} />
      {tools.length > 0 && <div className="muted small">preparing {tools.join(', ')}…</div>}
    </div>
  );
}

export function ItemView({ sessionId, item, last = false }: { sessionId: string; item: Item; /** The newest item: only there does Retry make sense. */ last?: boolean }) {
  const readOnly = useReadOnly();
  switch (item.kind) {
    case 'user': {
      const text = item.event.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
      return (
        <div className={item.queued ? 'msg user queued' : 'msg user'}>
          <Who copy={text}>
            {/* A share link's viewer reads the owner's words, not their own. */}
            {readOnly ? 'owner' : 'you'}
            {item.queued && (
              <span className="queued-badge" data-testid="queued" title="Sent while the agent was busy: it reads this when its current step ends">
                queued
              </span>
            )}
          </Who>
          {/* What the person typed, as typed: no markdown. */}
          <Long
            text={text}
            render={(t) => (
              <div className="text" data-testid="user-message">
                {t}
              </div>
            )}
          />
        </div>
      );
    }
    case 'agent': {
      const text = item.event.content.map((c) => (c.type === 'text' ? c.text : '[redacted]')).join('\n');
      return (
        <div className="msg agent" data-interrupted={item.event.interrupted ? true : undefined}>
          <Who copy={text}>
            agent
            {item.event.interrupted && (
              <span className="interrupted-badge" data-testid="interrupted-answer" title="Cut short by Interrupt: kept as far as it was written; the agent sees it too">
                interrupted
              </span>
            )}
          </Who>
          <Long text={text} render={(t, clipped) => <Markdown text={t} partial={clipped} testId="agent-message" />} />
        </div>
      );
    }
    case 'thinking':
      return (
        <details className="msg thinking">
          <summary>thinking</summary>
          <Long text={(item.event.content ?? []).map((c) => c.thinking).join('\n')} render={(t) => <pre>{t}</pre>} />
        </details>
      );
    case 'tool': {
      const { use, result } = item.call;
      const hand = use.type === 'agent.tool_use' ? ((result?.type === 'agent.tool_result' ? result.hand : undefined) ?? use.hand) : undefined;
      const server = use.type === 'agent.mcp_tool_use' ? use.mcp_server_name : undefined;
      const bash = !server && use.name === 'bash' && typeof use.input.command === 'string';
      const asking = awaitsConfirmation(item.call);
      const denied = wasDenied(item.call);
      // A verdict line already gives the owner's reason: the result (the same reason, for the model) is not shown twice.
      const output = result && !(denied && item.call.confirmation) ? resultText(result.content) : null;
      return (
        <div className={`tool ${denied ? 'tool-denied' : result?.is_error ? 'tool-error' : ''}`} data-testid="tool-call" data-state={result ? (denied ? 'denied' : result.is_error ? 'failed' : 'done') : asking ? 'asking' : 'running'}>
          <div className="tool-head">
            {item.askedBy && (
              <span className="tool-asker" data-testid="tool-asker">
                {item.askedBy} asks:
              </span>
            )}
            <span className="mono">{use.name}</span>
            {server && (
              <span className="muted small" data-testid="tool-server">
                on MCP server {server}
              </span>
            )}
            {hand && (
              <span className="muted small" data-testid="tool-hand">
                on {hand}
              </span>
            )}
            <span className="muted small" data-testid="tool-state">
              {result ? (denied ? 'denied' : result.is_error ? 'failed' : 'done') : denied ? 'denied' : asking ? (readOnly ? "waiting for the owner's approval" : 'waiting for your approval') : 'running…'}
            </span>
          </div>
          {bash ? (
            <Long
              text={output ?? ''}
              render={(t) => (
                <pre className="terminal">
                  <span className="prompt">$ </span>
                  {String(use.input.command)}
                  {output !== null && (
                    <>
                      {'\n'}
                      <span data-testid="tool-result">{t}</span>
                    </>
                  )}
                </pre>
              )}
            />
          ) : (
            <>
              <Long text={JSON.stringify(use.input, null, 2)} render={(t) => <pre className="tool-input">{t}</pre>} />
              {output !== null && (
                <Long
                  text={output}
                  render={(t) => (
                    <pre className="tool-result" data-testid="tool-result">
                      {t}
                    </pre>
                  )}
                />
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
            {item.askedBy && (
              <span className="tool-asker" data-testid="tool-asker">
                {item.askedBy} asks:
              </span>
            )}
            <span className="mono">{use.name}</span>
            <span className="muted small">custom tool</span>
            <span className="muted small">{result ? (result.is_error ? 'failed' : 'done') : "waiting for the client's result"}</span>
          </div>
          <Long text={JSON.stringify(use.input, null, 2)} render={(t) => <pre className="tool-input">{t}</pre>} />
          {result && (
            <Long
              text={resultText(result.content)}
              render={(t) => (
                <pre className="tool-result" data-testid="custom-tool-result">
                  {t}
                </pre>
              )}
            />
          )}
        </div>
      );
    }
    case 'retry':
      return (
        <div className="notice muted" data-testid="retry-notice" title={item.event.content.map((c) => (c.type === 'text' ? c.text : '')).join('')}>
          Retry: Paddock asked the agent to go on from where it stopped.
        </div>
      );
    case 'interrupt':
      return <div className="notice">interrupted</div>;
    case 'error': {
      const text = errorText(item.event.error);
      return (
        <div className="notice error" data-testid="session-error" data-error-type={item.event.error.type}>
          <strong>{text.sentence}</strong> {text.hint}
          {text.retry && last && !readOnly && <RetryButton sessionId={sessionId} />}
          <details className="small muted">
            <summary>details</summary>
            {item.event.error.type}: {item.event.error.message} ({item.event.error.retry_status.type})
          </details>
        </div>
      );
    }
    case 'rescheduled':
      return (
        <div className="notice muted">
          model unavailable; retry {item.event.attempt ?? ''} in {Math.round((item.event.retry_in_ms ?? 0) / 100) / 10}s
        </div>
      );
    case 'thread-sent':
      return (
        <div className="notice thread-message" data-testid="thread-sent">
          {/* A child's message goes to the coordinator (depth 1), which its event names by thread id only. */}
          <strong>→ {item.event.to_agent_name ?? (item.event.session_thread_id ? 'coordinator' : item.event.to_session_thread_id)}</strong>
          <Long text={textOf(item.event.content)} render={(t) => <pre className="tool-result">{t}</pre>} />
        </div>
      );
    case 'thread-received':
      return (
        <div className="notice thread-message" data-testid="thread-received">
          <strong>← {item.event.from_agent_name ?? item.event.from_session_thread_id}</strong>
          <Long text={textOf(item.event.content)} render={(t) => <pre className="tool-result">{t}</pre>} />
        </div>
      );
    case 'compacted':
      return (
        <details className="notice muted" data-testid="context-compacted">
          <summary>
            context compacted: events {item.event.from_seq ?? 1}–{item.event.to_seq ?? '?'} summarized for the model (the log keeps them)
          </summary>
          <Long text={item.event.summary ?? ''} render={(t) => <pre className="tool-result">{t}</pre>} />
        </details>
      );
    case 'outcome':
      return (
        <div className="notice outcome" data-testid="outcome-defined">
          <strong>Outcome</strong> {item.event.description}
          <span className="muted small"> · graded up to {item.event.max_iterations ?? 3} times</span>
          <details className="small muted">
            <summary>rubric</summary>
            <Long text={item.event.rubric.type === 'text' ? item.event.rubric.content : `file ${item.event.rubric.file_id}`} render={(t) => <pre className="tool-result">{t}</pre>} />
          </details>
        </div>
      );
    case 'evaluation': {
      const { start, end } = item;
      return (
        <div className={`notice evaluation ${end ? `verdict-${end.result}` : ''}`} data-testid="outcome-evaluation" data-result={end?.result ?? 'evaluating'}>
          <strong>
            Iteration {start.iteration + 1}: {end ? VERDICT_LABEL[end.result] : 'grading…'}
          </strong>
          {end && end.explanation && <Long text={end.explanation} render={(t) => <p className="evaluation-explanation">{t}</p>} />}
        </div>
      );
    }
    case 'system':
      return (
        <div className="notice muted" data-testid="system-message">
          system: {item.event.content.map((c) => c.text).join(' ')}
        </div>
      );
    default:
      return unreachable(item);
  }
}

/** A thread message's text (its other blocks named by their type). */
function textOf(content: ReadonlyArray<{ type: string; text?: string }>): string {
  return content.map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join('\n');
}
