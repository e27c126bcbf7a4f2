/** The SDK's repository error types (`sessions/events.d.ts`, `BetaManagedAgentsRepository*ErrorObject`). */
export type RepositoryErrorType = 'repository_authentication_error' | 'repository_forbidden_error' | 'repository_not_found_error' | 'repository_checkout_error' | 'repository_clone_error';

/**
 * What a failed clone or checkout was, from git's own words (the hand runs git, so its stderr is
 * what we have): the HTTP status the git proxy passed back from the host (401 no or wrong token,
 * 403 refused, 404 no such repository), a missing branch or commit, anything else a clone error.
 */
export function repositoryErrorType(stage: 'clone' | 'checkout', gitOutput: string): RepositoryErrorType {
  if (/returned error: 401|Authentication failed|could not read Username/i.test(gitOutput)) return 'repository_authentication_error';
  if (/returned error: 403/i.test(gitOutput)) return 'repository_forbidden_error';
  if (/returned error: 404|repository '[^']*' not found/i.test(gitOutput)) return 'repository_not_found_error';
  if (stage === 'checkout' || /Remote branch .* not found|did not match any|not our ref|reference is not a tree|unknown revision/i.test(gitOutput)) return 'repository_checkout_error';
  return 'repository_clone_error';
}
