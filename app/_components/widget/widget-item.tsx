import { Markdown } from '~/app/_components/markdown/markdown';
import type { Item } from '~/app/_components/session-view/derive';
import { BUDGET_SPENT, HIDDEN_TOOL } from '~/lib/widget';

export function itemKey(item: Item, i: number): string {
  if (item.kind === 'tool' || item.kind === 'custom') return item.call.use.id;
  return 'event' in item ? item.event.id : String(i);
}

/** One entry: the visitor's text, the agent's markdown, a tool call as one compact line (its output behind a disclosure). */
export function WidgetItem({ item }: { item: Item }) {
  switch (item.kind) {
    case 'user':
      return (
        <div className="pw-msg pw-user" data-testid="widget-user">
          {item.event.content.map((c) => (c.type === 'text' ? c.text : '')).join('')}
        </div>
      );
    case 'agent':
      return (
        <div className="pw-msg pw-agent" data-testid="widget-answer">
          <Markdown text={item.event.content.map((c) => (c.type === 'text' ? c.text : '')).join('')} />
        </div>
      );
    case 'tool': {
      const { use, result } = item.call;
      // The owner hides tools: the server sent no name, input or output, only that one runs.
      if (use.name === HIDDEN_TOOL && Object.keys(use.input).length === 0) {
        return (
          <p className="pw-note pw-working" data-testid="widget-tool" data-hidden="true">
            {result ? (result.is_error ? 'a step failed' : 'worked on it') : 'working…'}
          </p>
        );
      }
      const state = result ? (result.is_error ? 'failed' : 'done') : 'running…';
      const output = (result?.content ?? []).map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
      return (
        <details className="pw-tool" data-testid="widget-tool">
          <summary>
            <span className="pw-mono">{use.name}</span> <span className="pw-muted">{state}</span>
          </summary>
          <pre className="pw-mono">{output.length > 2_000 ? `${output.slice(0, 2_000)}…` : output || JSON.stringify(use.input).slice(0, 500)}</pre>
        </details>
      );
    }
    case 'interrupt':
      return (
        <p className="pw-note pw-stopped" data-testid="widget-stopped">
          Stopped
        </p>
      );
    case 'error':
      // The budget's notice is shown under the log, with the offer of a new conversation.
      if (item.event.error.message === BUDGET_SPENT) return null;
      return <p className="pw-note">Something went wrong on our side; the assistant may retry.</p>;
    default:
      return null;
  }
}
