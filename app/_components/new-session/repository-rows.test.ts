import { describe, expect, it } from 'vitest';
import { newRepositoryRow, plainCreateError, repositoryResources } from '~/app/_components/new-session/repository-rows';

describe('the new-session form’s repositories', () => {
  it('sends rows with a URL, leaving blank optional fields to the server’s defaults', () => {
    expect(
      repositoryResources([
        { ...newRepositoryRow('a'), url: ' https://github.com/acme/widgets ', token: ' ghp_x ', branch: 'dev', mountPath: '/workspace/w' },
        { ...newRepositoryRow('b'), url: 'https://github.com/acme/docs' },
        newRepositoryRow('c'),
      ]),
    ).toEqual([
      { type: 'github_repository', url: 'https://github.com/acme/widgets', authorization_token: 'ghp_x', checkout: { type: 'branch', name: 'dev' }, mount_path: '/workspace/w' },
      { type: 'github_repository', url: 'https://github.com/acme/docs' },
    ]);
  });

  it('says what the server refused in the form’s words', () => {
    expect(plainCreateError('invalid input: resources.0.url: must be an https URL of a repository')).toBe('Repository 1 URL: must be an https URL of a repository');
    expect(plainCreateError('invalid input: resources.1.mount_path: must be under /workspace/')).toBe('Repository 2 mount path: must be under /workspace/');
    expect(plainCreateError('invalid input: resources.0.checkout.name: too long')).toBe('Repository 1 branch: too long');
    expect(plainCreateError('vault_ids: vault vlt_1 is archived')).toBe('Vaults: vault vlt_1 is archived');
  });
});
