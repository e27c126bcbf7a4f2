import { describe, expect, it } from 'vitest';
import { normalizeEnvironmentConfig, unsupportedEnvironment } from '~/lib/agent';

describe('whether a session can run in an environment', () => {
  const open = normalizeEnvironmentConfig({ type: 'cloud', networking: { type: 'unrestricted' } });
  const limited = normalizeEnvironmentConfig({ type: 'cloud', networking: { type: 'limited', allowed_hosts: ['example.com'] } });

  it('refuses unrestricted networking while the server does not allow it, naming the setting', () => {
    expect(unsupportedEnvironment(open, { allowUnrestrictedNetwork: false })).toMatch(/unrestricted networking, which this server does not allow \(PADDOCK_ALLOW_UNRESTRICTED_NETWORK is off\)/);
  });

  it('takes unrestricted networking when the server allows it, and limited networking either way', () => {
    expect(unsupportedEnvironment(open, { allowUnrestrictedNetwork: true })).toBeNull();
    expect(unsupportedEnvironment(limited, { allowUnrestrictedNetwork: false })).toBeNull();
  });

  it('still refuses packages (and runs self_hosted environments, on their workers) when unrestricted networking is allowed', () => {
    const withPackages = normalizeEnvironmentConfig({ type: 'cloud', networking: { type: 'unrestricted' }, packages: { pip: ['pandas'] } });
    expect(unsupportedEnvironment(withPackages, { allowUnrestrictedNetwork: true })).toMatch(/lists packages \(pip\)/);
    expect(unsupportedEnvironment({ type: 'self_hosted' }, { allowUnrestrictedNetwork: false })).toBeNull();
  });
});
