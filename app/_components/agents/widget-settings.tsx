'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { CopyButton } from '~/app/_components/copy-button/copy-button';
import { MAX_SUGGESTIONS, WIDGET_DEFAULTS, type WidgetSettingsInput, embedSnippet } from '~/lib/widget';
import { useTRPC } from '~/lib/browser/trpc';
import '~/app/_components/agents/widget-settings.css';

type Form = Omit<WidgetSettingsInput, 'allowed_origins' | 'suggested_questions'> & { origins: string; questions: string[] };
type NumberKey = 'max_tokens_per_session' | 'max_minutes_per_session' | 'visitor_per_minute' | 'ip_per_minute' | 'sessions_per_hour';

/** One row of the form: its label in the left column, the control in the right, a hint under it. */
function Field({ label, hint, htmlFor, children }: { label: string; hint?: string; htmlFor?: string; children: ReactNode }) {
  return (
    <div className="wf-row">
      <label className="wf-label" htmlFor={htmlFor}>
        {label}
      </label>
      <div className="wf-control">
        {children}
        {hint && <span className="wf-hint">{hint}</span>}
      </div>
    </div>
  );
}

/**
 * One agent's docs widget: on or off, the sites (origins) that may embed it, how it greets
 * visitors, whether they see tool names, the environment its conversations run in, each
 * conversation's budget and the rate limits; the snippet to paste, with a Copy button.
 */
export function WidgetSettingsPanel({ agentId, onClose }: { agentId: string; onClose: () => void }) {
  const trpc = useTRPC();
  const current = useQuery(trpc.widgets.get.queryOptions({ agentId }));
  const environments = useQuery(trpc.environments.list.queryOptions({ limit: 100 }));
  const [form, setForm] = useState<Form | null>(null);
  const save = useMutation(
    trpc.widgets.set.mutationOptions({
      onSuccess: async () => {
        await current.refetch();
        setForm(null);
      },
    }),
  );
  const data = current.data;
  const f: Form | null =
    form ??
    (data
      ? {
          ...WIDGET_DEFAULTS,
          ...data,
          origins: data.allowed_origins.join('\n'),
          questions: Array.from({ length: MAX_SUGGESTIONS }, (_, i) => data.suggested_questions[i] ?? ''),
        }
      : null);
  const set = <K extends keyof Form>(k: K, v: Form[K]) => f && setForm({ ...f, [k]: v });
  const num = (k: NumberKey, label: string) =>
    f && (
      <Field label={label} htmlFor={`wf-${agentId}-${k}`}>
        <input id={`wf-${agentId}-${k}`} type="number" min={1} value={f[k]} onChange={(e) => set(k, Number(e.target.value))} data-testid={`widget-${k}`} />
      </Field>
    );
  const id = (k: string) => `wf-${agentId}-${k}`;
  const serverOrigin = typeof window === 'undefined' ? '' : window.location.origin;
  const snippet = embedSnippet(serverOrigin, agentId);
  const unasked = data?.unasked_tools ?? [];
  return (
    <div className="card widget-settings" data-testid="widget-settings">
      <div className="card-head">
        <strong>Docs widget</strong>
        <button type="button" className="quiet" onClick={onClose}>
          Close
        </button>
      </div>
      {current.error && <p className="error">{current.error.message}</p>}
      {unasked.length > 0 && (
        <p className="wf-warning" role="alert" data-testid="widget-tools-warning">
          <strong>Anonymous visitors would run tools.</strong> This agent runs {unasked.join(', ')} without asking anyone: in the widget, any visitor&apos;s message can
          make it do so. Set those tools to ask first (Edit the agent), or give the widget an agent without them.
        </p>
      )}
      {f && (
        <form
          className="wf"
          onSubmit={(e) => {
            e.preventDefault();
            const { origins, questions, ...rest } = f;
            save.mutate({ agentId, ...rest, allowed_origins: origins.split(/[\s,]+/).filter(Boolean), suggested_questions: questions.map((q) => q.trim()).filter(Boolean) });
          }}
        >
          <Field label="On">
            <label className="wf-check">
              <input type="checkbox" checked={f.enabled} onChange={(e) => set('enabled', e.target.checked)} data-testid="widget-enabled" /> Visitors of the sites below may talk to this agent
            </label>
          </Field>
          <Field label="Allowed origins" hint="One a line, e.g. https://docs.example.com: any other site is refused." htmlFor={id('origins')}>
            <textarea id={id('origins')} rows={3} value={f.origins} onChange={(e) => set('origins', e.target.value)} data-testid="widget-origins" />
          </Field>
          <Field label="Display name" hint={`Shown in the widget's header. Empty: the agent's name${data ? ` (${data.agent_name})` : ''}.`} htmlFor={id('name')}>
            <input id={id('name')} type="text" maxLength={60} value={f.display_name} onChange={(e) => set('display_name', e.target.value)} data-testid="widget-display-name" />
          </Field>
          <Field label="Greeting" hint="The first thing a visitor reads." htmlFor={id('greeting')}>
            <textarea id={id('greeting')} rows={2} maxLength={500} value={f.greeting} onChange={(e) => set('greeting', e.target.value)} data-testid="widget-greeting" />
          </Field>
          <Field label="Suggested questions" hint={`Up to ${MAX_SUGGESTIONS}, asked with one click.`} htmlFor={id('q0')}>
            {f.questions.map((q, i) => (
              <input
                key={i}
                id={id(`q${i}`)}
                type="text"
                maxLength={200}
                aria-label={`Suggested question ${i + 1}`}
                value={q}
                onChange={(e) => set('questions', f.questions.map((old, j) => (j === i ? e.target.value : old)))}
                data-testid="widget-question"
              />
            ))}
          </Field>
          <Field label="Tool names" hint="Off: visitors see “working…” while a tool runs, and neither its name nor its output reaches their browser.">
            <label className="wf-check">
              <input type="checkbox" checked={f.show_tool_names} onChange={(e) => set('show_tool_names', e.target.checked)} data-testid="widget-show-tools" /> Show visitors the
              tools the agent runs
            </label>
          </Field>
          <Field label="Environment" hint="Server-side hands only." htmlFor={id('env')}>
            <select id={id('env')} value={f.environment_id} onChange={(e) => set('environment_id', e.target.value)} data-testid="widget-environment">
              {(environments.data?.data ?? [{ id: f.environment_id, name: f.environment_id }]).map((env) => (
                <option key={env.id} value={env.id}>
                  {env.name} ({env.id})
                </option>
              ))}
            </select>
          </Field>
          {num('max_tokens_per_session', 'Tokens per conversation')}
          {num('max_minutes_per_session', 'Minutes per conversation')}
          {num('visitor_per_minute', 'Messages a minute per visitor')}
          {num('ip_per_minute', 'Messages a minute per IP address')}
          {num('sessions_per_hour', 'New conversations an hour (all visitors)')}
          <div className="wf-row">
            <span />
            <div className="wf-control wf-actions">
              {save.error && <p className="error">{save.error.message}</p>}
              <span>
                <button type="submit" className="primary" disabled={save.isPending} data-testid="widget-save">
                  Save
                </button>
                {save.isSuccess && !form && (
                  <span className="muted small" data-testid="widget-saved">
                    {' '}
                    Saved.
                  </span>
                )}
              </span>
            </div>
          </div>
        </form>
      )}
      <div className="wf-snippet-head">
        <p className="small muted">Paste this where the widget should appear (it loads asynchronously and never blocks the page):</p>
        <CopyButton text={snippet} testId="widget-snippet-copy" />
      </div>
      <pre className="mono small widget-snippet" data-testid="widget-snippet">
        {snippet}
      </pre>
    </div>
  );
}
