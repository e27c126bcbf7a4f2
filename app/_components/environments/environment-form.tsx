'use client';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import type { Environment, PackageLists } from '~/lib/agent';
import { useTRPC } from '~/lib/browser/trpc';

const MANAGERS = ['apt', 'npm', 'pip'] as const;
type Manager = (typeof MANAGERS)[number];

/** Names typed one per line, or separated by spaces or commas. */
const splitList = (s: string): string[] => s.split(/[\s,]+/).map((x) => x.trim()).filter((x) => x !== '');

/** Creates a (cloud) environment or edits one: networking and the packages its hands get. */
export function EnvironmentForm({ env, onDone, onCancel }: { env: Environment | null; onDone: () => void; onCancel: () => void }) {
  const trpc = useTRPC();
  const cloud = env?.config.type === 'cloud' ? env.config : null;
  const [name, setName] = useState(env?.name ?? '');
  const [description, setDescription] = useState(env?.description ?? '');
  const [network, setNetwork] = useState<'limited' | 'unrestricted'>(cloud?.networking.type ?? 'limited');
  const limited = cloud?.networking.type === 'limited' ? cloud.networking : null;
  const [hosts, setHosts] = useState((limited?.allowed_hosts ?? []).join('\n'));
  const [packageManagers, setPackageManagers] = useState(limited?.allow_package_managers ?? false);
  const [packages, setPackages] = useState<Record<Manager, string>>({ apt: (cloud?.packages.apt ?? []).join(' '), npm: (cloud?.packages.npm ?? []).join(' '), pip: (cloud?.packages.pip ?? []).join(' ') });
  const create = useMutation(trpc.environments.create.mutationOptions({ onSuccess: onDone }));
  const update = useMutation(trpc.environments.update.mutationOptions({ onSuccess: onDone }));
  const pending = create.isPending || update.isPending;
  const failed = create.error ?? update.error;
  // A self-hosted environment has no settings Paddock runs: only its name and description change.
  const [hostedNew, setHostedNew] = useState(false);
  const selfHosted = env ? env.config.type === 'self_hosted' : hostedNew;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    // Lists this form does not show (cargo, gem, go) and the MCP switch are kept as they were.
    const kept: Partial<PackageLists> = cloud ? { cargo: cloud.packages.cargo, gem: cloud.packages.gem, go: cloud.packages.go } : {};
    const config = {
      type: 'cloud' as const,
      networking:
        network === 'unrestricted'
          ? { type: 'unrestricted' as const }
          : { type: 'limited' as const, allowed_hosts: splitList(hosts), allow_package_managers: packageManagers, allow_mcp_servers: limited?.allow_mcp_servers ?? false },
      packages: { ...kept, apt: splitList(packages.apt), npm: splitList(packages.npm), pip: splitList(packages.pip) },
    };
    const common = { name: name.trim(), description: description.trim() || null };
    if (!env) create.mutate({ ...common, config: selfHosted ? { type: 'self_hosted' as const } : config });
    else update.mutate({ id: env.id, ...common, ...(selfHosted ? {} : { config }) });
  };

  return (
    <form className="edit-form" onSubmit={submit} data-testid="environment-form">
      <h2>{env ? `Edit ${env.name}` : 'New environment'}</h2>
      <div className="fields">
        <label>
          Name
          <input data-testid="environment-name" value={name} maxLength={256} required onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Description
          <input value={description} maxLength={2048} onChange={(e) => setDescription(e.target.value)} placeholder="what runs here" />
        </label>
        {!env && (
          <label className="check">
            <input type="checkbox" data-testid="environment-self-hosted" checked={hostedNew} onChange={(e) => setHostedNew(e.target.checked)} />
            Self-hosted: my own machines run its tools (paddock-hand worker, or the SDK&apos;s worker)
          </label>
        )}
      </div>
      {selfHosted ? (
        <p className="muted">Self-hosted: Paddock does not run this environment&apos;s hands, so it has no settings here.</p>
      ) : (
        <>
          <fieldset>
            <legend>Networking</legend>
            <label className="check">
              <input type="radio" name="network" data-testid="network-limited" checked={network === 'limited'} onChange={() => setNetwork('limited')} />
              Limited: only the hosts listed below
            </label>
            <label className="check">
              <input type="radio" name="network" data-testid="network-unrestricted" checked={network === 'unrestricted'} onChange={() => setNetwork('unrestricted')} />
              Unrestricted
            </label>
            {network === 'limited' && (
              <div className="fields">
                <label className="wide">
                  Allowed hosts (one per line; *.example.com for subdomains)
                  <textarea className="mono" data-testid="allowed-hosts" rows={3} value={hosts} onChange={(e) => setHosts(e.target.value)} placeholder="api.github.com" />
                </label>
                <label className="check wide">
                  <input type="checkbox" data-testid="allow-package-managers" checked={packageManagers} onChange={(e) => setPackageManagers(e.target.checked)} />
                  Allow package managers (npm, PyPI, apt mirrors)
                </label>
              </div>
            )}
          </fieldset>
          <fieldset>
            <legend>Packages</legend>
            <p className="muted small">Installed in every hand of a session in this environment. Separate names with spaces.</p>
            <div className="fields">
              {MANAGERS.map((m) => (
                <label key={m}>
                  {m}
                  <input className="mono" data-testid={`packages-${m}`} value={packages[m]} onChange={(e) => setPackages((p) => ({ ...p, [m]: e.target.value }))} />
                </label>
              ))}
            </div>
          </fieldset>
        </>
      )}
      {failed && (
        <p className="error" role="alert" data-testid="environment-form-error">
          {failed.message}
        </p>
      )}
      <div className="form-actions">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="primary" data-testid="save-environment" disabled={pending}>
          {pending ? 'Saving…' : env ? 'Save' : 'Create environment'}
        </button>
      </div>
    </form>
  );
}
