import { describe, expect, it } from 'vitest';
import { credentialTarget } from '~/app/_components/vaults/credential-target';

describe('a credential as the settings page lists it', () => {
  it('shows the MCP server URL, or the variable and the hosts it may go to', () => {
    expect(credentialTarget({ type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp' })).toBe('https://mcp.example.com/mcp');
    expect(credentialTarget({ type: 'mcp_oauth', mcp_server_url: 'https://l.example.com/mcp', expires_at: null, refresh: null })).toBe('https://l.example.com/mcp');
    const env = { type: 'environment_variable', secret_name: 'STRIPE_KEY', injection_location: { header: true, body: false } } as const;
    expect(credentialTarget({ ...env, networking: { type: 'limited', allowed_hosts: ['api.stripe.com', 'x.example.com'] } })).toBe('$STRIPE_KEY → api.stripe.com, x.example.com');
    expect(credentialTarget({ ...env, networking: { type: 'limited', allowed_hosts: [] } })).toBe('$STRIPE_KEY → no hosts');
    expect(credentialTarget({ ...env, networking: { type: 'unrestricted' } })).toBe('$STRIPE_KEY → any host');
  });
});
