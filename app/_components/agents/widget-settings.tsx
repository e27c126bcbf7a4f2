'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { WIDGET_DEFAULTS, type WidgetSettingsInput, embedSnippet } from '~/lib/widget';
import { useTRPC } from '~/lib/browser/trpc';

type Form = Omit<WidgetSettingsInput, 'allowed_origins'> & { origins: string };

/**
 * One agent's docs widget: on or off, the sites (origins) that may embed it, the environment its
 * conversations run in, each conversation's budget, and the rate limits; the snippet to paste.
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
  const f: Form | null = form ?? (data ? { ...WIDGET_DEFAULTS, ...data, origins: data.allowed_origins.join('\n') } : null);
  const set = <K extends keyof Form>(k: K, v: Form[K]) => f && setForm({ ...f, [k]: v });
  const num = (k: 'max_tokens_per_session' | 'max_minutes_per_session' | 'visitor_per_minute' | 'ip_per_minute' | 'sessions_per_hour', label: string) =>
    f && (
      <label className="widget-field">
        {label}
        <input type="number" min={1} value={f[k]} onChange={(e) => set(k, Number(e.target.value))} data-testid={`widget-${k}`} />
      </label>
    );
  const serverOrigin = typeof window === 'undefined' ? '' : window.location.origin;
  return (
    <div className="card widget-settings" data-testid="widget-settings">
      <div className="card-head">
        <strong>Docs widget</strong>
        <button type="button" className="quiet" onClick={onClose}>
          Close
        </button>
      </div>
      {current.error && <p className="error">{current.error.message}</p>}
      {f && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const { origins, ...rest } = f;
            save.mutate({ agentId, ...rest, allowed_origins: origins.split(/[\s,]+/).filter(Boolean) });
          }}
        >
          <label className="widget-field">
            <input type="checkbox" checked={f.enabled} onChange={(e) => set('enabled', e.target.checked)} data-testid="widget-enabled" /> Visitors of the sites below may talk to this agent
          </label>
          <label className="widget-field">
            Allowed origins (one a line, e.g. https://docs.example.com): any other site is refused
            <textarea rows={3} value={f.origins} onChange={(e) => set('origins', e.target.value)} data-testid="widget-origins" />
          </label>
          <label className="widget-field">
            Environment (server-side hands only)
            <select value={f.environment_id} onChange={(e) => set('environment_id', e.target.value)} data-testid="widget-environment">
              {(environments.data?.data ?? [{ id: f.environment_id, name: f.environment_id }]).map((env) => (
                <option key={env.id} value={env.id}>
                  {env.name} ({env.id})
                </option>
              ))}
            </select>
          </label>
          <div className="widget-grid">
            {num('max_tokens_per_session', 'Tokens per conversation')}
            {num('max_minutes_per_session', 'Minutes per conversation')}
            {num('visitor_per_minute', 'Messages a minute per visitor')}
            {num('ip_per_minute', 'Messages a minute per IP address')}
            {num('sessions_per_hour', 'New conversations an hour (all visitors)')}
          </div>
          {save.error && <p className="error">{save.error.message}</p>}
          <button type="submit" className="primary" disabled={save.isPending} data-testid="widget-save">
            Save
          </button>
          {save.isSuccess && !form && (
            <span className="muted small" data-testid="widget-saved">
              {' '}
              Saved.
            </span>
          )}
        </form>
      )}
      <p className="small muted">Paste this where the widget should appear (it loads asynchronously and never blocks the page):</p>
      <pre className="mono small widget-snippet" data-testid="widget-snippet">
        {embedSnippet(serverOrigin, agentId)}
      </pre>
    </div>
  );
}
