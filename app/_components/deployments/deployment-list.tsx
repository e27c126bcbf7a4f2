'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { timeAgo } from '~/app/_components/time';
import { useTRPC } from '~/lib/browser/trpc';

/** A deployment's newest runs, each with its session (or why it failed). */
function Runs({ deploymentId }: { deploymentId: string }) {
  const trpc = useTRPC();
  const runs = useQuery(trpc.deployments.runs.queryOptions({ deploymentId }));
  const data = runs.data?.data ?? [];
  if (data.length === 0) return <div className="muted small">No runs yet.</div>;
  return (
    <ul className="small" data-testid="deployment-runs">
      {data.map((r) => (
        <li key={r.id} data-testid="deployment-run">
          {r.trigger_context.type === 'schedule' ? `scheduled for ${new Date(r.trigger_context.scheduled_at).toLocaleString()}` : 'run by hand'} · {timeAgo(r.created_at)} ·{' '}
          {r.session_id ? <a href={`/s/${r.session_id}`}>session</a> : <span className="error">{r.error?.type}: {r.error?.message}</span>}
        </li>
      ))}
    </ul>
  );
}

/** The deployments page: each deployment's schedule and next run, its runs with their sessions; pause, run now, archive; a new one. */
export function DeploymentList() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const list = useQuery(trpc.deployments.list.queryOptions());
  const agents = useQuery(trpc.agents.list.queryOptions({ limit: 100 }));
  const environments = useQuery(trpc.environments.list.queryOptions({ limit: 100 }));
  const refresh = () => void qc.invalidateQueries({ queryKey: trpc.deployments.pathKey() });
  const pause = useMutation(trpc.deployments.pause.mutationOptions({ onSuccess: refresh }));
  const unpause = useMutation(trpc.deployments.unpause.mutationOptions({ onSuccess: refresh }));
  const archive = useMutation(trpc.deployments.archive.mutationOptions({ onSuccess: refresh }));
  const run = useMutation(trpc.deployments.run.mutationOptions({ onSuccess: refresh }));
  const create = useMutation(
    trpc.deployments.create.mutationOptions({
      onSuccess: () => {
        refresh();
        setForm((f) => ({ ...f, name: '', message: '' }));
      },
    }),
  );
  const [form, setForm] = useState({ name: '', agent: 'agent_default', environment: 'env_default', message: '', expression: '', timezone: 'UTC' });
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({
      name: form.name,
      agent: form.agent,
      environment_id: form.environment,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: form.message }] }],
      ...(form.expression.trim() ? { schedule: { type: 'cron', expression: form.expression.trim(), timezone: form.timezone } } : {}),
    });
  };
  const failed = list.error ?? create.error ?? pause.error ?? unpause.error ?? archive.error ?? run.error;

  return (
    <section>
      <div className="list-head">
        <h1>Deployments</h1>
      </div>
      <p className="muted">
        An agent version with its environment and first message, started by hand or on a cron schedule. Each start is a run with its session; a scheduled time starts once, however many
        Paddock instances are up. Times missed while every instance was down start one run, for the newest of them.
      </p>
      <form onSubmit={submit} className="edit-form" data-testid="deployment-new">
        <h2>New deployment</h2>
        <div className="fields">
          <label>
            Name
            <input value={form.name} onChange={set('name')} required maxLength={256} placeholder="weekday triage" />
          </label>
          <label>
            Agent
            <select value={form.agent} onChange={set('agent')} required>
              {(agents.data?.data ?? [{ id: 'agent_default', name: 'default' }]).map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Environment
            <select value={form.environment} onChange={set('environment')} required>
              {(environments.data?.data ?? [{ id: 'env_default', name: 'default' }]).map((e) => (
                <option key={e.id} value={e.id}>
                  {e.name}
                </option>
              ))}
            </select>
          </label>
          <label className="wide">
            First message
            <input value={form.message} onChange={set('message')} required placeholder="what the agent is asked at each run" />
          </label>
          <label>
            Cron expression
            <input className="mono" value={form.expression} onChange={set('expression')} placeholder="0 9 * * 1-5 (empty: by hand only)" />
          </label>
          <label>
            Timezone
            <input value={form.timezone} onChange={set('timezone')} placeholder="UTC" />
          </label>
        </div>
        <div className="form-actions">
          <button type="submit" className="primary" disabled={create.isPending}>
            Create
          </button>
        </div>
      </form>
      {failed && <p className="error">{failed.message}</p>}
      {list.data && list.data.length === 0 && <p className="muted">No deployments yet.</p>}
      <ul className="cards" data-testid="deployments">
        {list.data?.map((d) => (
          <li key={d.id} className="card" data-testid="deployment-row">
            <div>
              <strong>{d.name}</strong> <span className="muted small mono">{d.id}</span> · {d.status}
              {d.paused_reason?.type === 'error' && <span className="error"> (after {d.paused_reason.error.type})</span>}
            </div>
            <div className="small">
              {d.schedule ? (
                <>
                  <span className="mono">{d.schedule.expression}</span> ({d.schedule.timezone}) · next: {d.status === 'paused' ? 'paused' : d.schedule.upcoming_runs_at[0] ? new Date(d.schedule.upcoming_runs_at[0]).toLocaleString() : 'never'}
                  {d.schedule.last_run_at && <> · last: {timeAgo(d.schedule.last_run_at)}</>}
                </>
              ) : (
                'by hand only'
              )}{' '}
              · agent <span className="mono">{d.agent.id}</span> v{d.agent.version}
            </div>
            <div>
              <button type="button" onClick={() => run.mutate({ id: d.id })} disabled={run.isPending} data-testid="deployment-run-now">
                Run now
              </button>{' '}
              {d.status === 'paused' ? (
                <button type="button" onClick={() => unpause.mutate({ id: d.id })}>
                  Unpause
                </button>
              ) : (
                <button type="button" onClick={() => pause.mutate({ id: d.id })}>
                  Pause
                </button>
              )}{' '}
              <button type="button" onClick={() => archive.mutate({ id: d.id })}>
                Archive
              </button>
            </div>
            <Runs deploymentId={d.id} />
          </li>
        ))}
      </ul>
    </section>
  );
}
