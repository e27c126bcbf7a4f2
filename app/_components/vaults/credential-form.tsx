'use client';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useTRPC } from '~/lib/browser/trpc';

type Kind = 'static_bearer' | 'environment_variable';

/**
 * Adds a credential: a static bearer token for an MCP server URL, or an environment variable with
 * the hosts it may be sent to. The value is typed once; every field clears after a save.
 */
export function CredentialForm({ vaultId, onSaved }: { vaultId: string; onSaved: () => void }) {
  const trpc = useTRPC();
  const [kind, setKind] = useState<Kind>('static_bearer');
  const [url, setUrl] = useState('');
  const [name, setName] = useState('');
  const [hosts, setHosts] = useState('');
  const [value, setValue] = useState('');
  const add = useMutation(
    trpc.vaults.addCredential.mutationOptions({
      onSuccess: () => {
        setUrl('');
        setName('');
        setHosts('');
        setValue('');
        onSaved();
      },
    }),
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const allowed = hosts.split(',').map((h) => h.trim()).filter(Boolean);
    add.mutate(
      kind === 'static_bearer'
        ? { vaultId, auth: { type: 'static_bearer', mcp_server_url: url.trim(), token: value } }
        : { vaultId, auth: { type: 'environment_variable', secret_name: name.trim(), secret_value: value, networking: { type: 'limited', allowed_hosts: allowed } } },
      // The mutation keeps its variables (the value) until reset: drop them once saved.
      { onSuccess: () => add.reset() },
    );
  };

  return (
    <form onSubmit={submit} className="credential-form" data-testid="credential-form">
      <select aria-label="Credential type" value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
        <option value="static_bearer">MCP server token</option>
        <option value="environment_variable">Environment variable</option>
      </select>
      {kind === 'static_bearer' ? (
        <input aria-label="MCP server URL" type="url" placeholder="https://mcp.example.com/mcp" value={url} maxLength={2048} onChange={(e) => setUrl(e.target.value)} required />
      ) : (
        <>
          <input aria-label="Variable name" placeholder="NAME, e.g. STRIPE_KEY" value={name} maxLength={128} pattern="[A-Za-z_][A-Za-z0-9_]*" onChange={(e) => setName(e.target.value)} required />
          <input aria-label="Allowed hosts" placeholder="hosts, comma separated: api.stripe.com" value={hosts} onChange={(e) => setHosts(e.target.value)} />
        </>
      )}
      <input
        aria-label={kind === 'static_bearer' ? 'Token' : 'Value'}
        type="password"
        autoComplete="off"
        placeholder={kind === 'static_bearer' ? 'token' : 'value'}
        value={value}
        maxLength={16_384}
        onChange={(e) => setValue(e.target.value)}
        required
      />
      <button type="submit" className="primary" disabled={add.isPending} data-testid="add-credential">
        Add credential
      </button>
      {add.error && <p className="error">{add.error.message}</p>}
    </form>
  );
}
