'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { timeAgo } from '~/app/_components/time';
import { useTRPC } from '~/lib/browser/trpc';

/** An endpoint's newest deliveries: each attempt's status code, and sending one again. */
function Deliveries({ endpointId }: { endpointId: string }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const deliveries = useQuery(trpc.webhooks.deliveries.queryOptions({ endpointId }));
  const redeliver = useMutation(trpc.webhooks.redeliver.mutationOptions({ onSuccess: () => void qc.invalidateQueries({ queryKey: trpc.webhooks.deliveries.queryKey({ endpointId }) }) }));
  const data = deliveries.data?.data ?? [];
  if (data.length === 0) return <div className="muted small">No deliveries yet.</div>;
  return (
    <table className="small deliveries" data-testid="webhook-deliveries">
      <tbody>
        {data.map((d) => (
          <tr key={d.id}>
            <td className="mono">{d.event_type}</td>
            <td>{d.status}</td>
            <td className="mono">{d.attempts.map((a) => a.status_code ?? a.error ?? '—').join(', ') || 'not sent yet'}</td>
            <td>{timeAgo(d.created_at)}</td>
            <td>
              <button type="button" onClick={() => redeliver.mutate({ id: d.id })} disabled={redeliver.isPending}>
                Redeliver
              </button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Webhook endpoints: made here (the signing secret shown once), their deliveries, deleted here. */
export function WebhooksSection() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const list = useQuery(trpc.webhooks.list.queryOptions());
  const [url, setUrl] = useState('');
  const [types, setTypes] = useState('');
  const [made, setMade] = useState<{ url: string; secret: string } | null>(null);
  const refresh = () => void qc.invalidateQueries({ queryKey: trpc.webhooks.pathKey() });
  const create = useMutation(
    trpc.webhooks.create.mutationOptions({
      onSuccess: (e) => {
        setMade({ url: e.url, secret: e.signing_secret });
        setUrl('');
        setTypes('');
        refresh();
      },
    }),
  );
  const remove = useMutation(trpc.webhooks.delete.mutationOptions({ onSuccess: refresh }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const eventTypes = types.split(/[\s,]+/).filter(Boolean);
    create.mutate({ url, ...(eventTypes.length > 0 ? { event_types: eventTypes as never } : {}) });
  };
  return (
    <section>
      <h2>Webhooks</h2>
      <p className="muted">
        Paddock POSTs events (sessions and their progress, deployments and their runs, agents, environments, vaults and memory stores) to these URLs, signed per Standard Webhooks: verify them with the SDK&apos;s{' '}
        <span className="mono">client.beta.webhooks.unwrap()</span> and the endpoint&apos;s signing secret, shown once when it is made. Public addresses only, unless listed in{' '}
        <span className="mono">PADDOCK_OUTBOUND_ALLOW</span>; failures are retried for about seven hours.
      </p>
      <form onSubmit={submit}>
        <input aria-label="Webhook URL" placeholder="https://example.com/paddock-hooks" value={url} onChange={(e) => setUrl(e.target.value)} required />
        <input aria-label="Event types" placeholder="event types, e.g. deployment_run.failed (empty: all)" value={types} onChange={(e) => setTypes(e.target.value)} />
        <button type="submit" className="primary" disabled={create.isPending || url.trim() === ''} data-testid="create-webhook">
          Add endpoint
        </button>
      </form>
      {(create.error ?? remove.error ?? list.error) && <p className="error">{(create.error ?? remove.error ?? list.error)?.message}</p>}
      {made && (
        <div className="new-key" data-testid="webhook-secret">
          <strong>{made.url}</strong>: copy this signing secret now; it will not be shown again.
          <code>{made.secret}</code>
          <button type="button" onClick={() => setMade(null)}>
            Done
          </button>
        </div>
      )}
      {list.data && list.data.data.length === 0 && <p className="muted">No endpoints yet.</p>}
      <ul className="cards">
        {list.data?.data.map((e) => (
          <li key={e.id} className="card" data-testid="webhook-row">
            <div>
              <span className="mono">{e.url}</span> · {e.event_types.length === 0 ? 'all events' : e.event_types.join(', ')}{' '}
              <button type="button" onClick={() => remove.mutate({ id: e.id })}>
                Delete
              </button>
            </div>
            <Deliveries endpointId={e.id} />
          </li>
        ))}
      </ul>
    </section>
  );
}
