import type { SessionErrorObject } from '~/lib/events';
import { unreachable } from '~/lib/unreachable';

export interface ErrorText {
  /** What happened, in a plain sentence. */
  sentence: string;
  /** What the reader can do (or that nothing is needed). */
  hint: string;
  /** Whether a Retry (a new message asking to go on) may help. */
  retry: boolean;
}

const CONNECTION = /connection error|ECONNREFUSED|ENOTFOUND|fetch failed|socket hang up|ETIMEDOUT/i;
const AUTH = /\b401\b|authentication|invalid x-api-key|api key/i;

/** A session.error as a person reads it: a sentence, a hint, and whether Retry makes sense. */
export function errorText(error: SessionErrorObject): ErrorText {
  const retrying = error.retry_status.type === 'retrying';
  const again = retrying ? 'Paddock tries again by itself.' : 'Paddock stopped trying: press Retry to ask the agent to go on.';
  switch (error.type) {
    case 'model_overloaded_error':
      return { sentence: 'The model is overloaded right now.', hint: again, retry: !retrying };
    case 'model_rate_limited_error':
      return { sentence: "The model's rate limit for this API key was reached.", hint: retrying ? again : 'Wait a minute, then press Retry.', retry: !retrying };
    case 'model_request_failed_error':
      if (AUTH.test(error.message)) return { sentence: 'The model refused the API key.', hint: 'Check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) on the server, restart it, then press Retry.', retry: !retrying };
      if (CONNECTION.test(error.message)) return { sentence: "Paddock could not reach the model's server.", hint: `Check the server's network and ANTHROPIC_BASE_URL. ${again}`, retry: !retrying };
      return { sentence: 'The request to the model failed.', hint: again, retry: !retrying };
    case 'mcp_connection_failed_error':
      return { sentence: `${mcpServer(error)} could not be reached.`, hint: `Check that it is running and reachable from the server. ${again}`, retry: !retrying };
    case 'mcp_authentication_failed_error':
      return { sentence: `${mcpServer(error)} refused the credentials it was given.`, hint: 'Check the credential in its vault, then press Retry.', retry: !retrying };
    case 'tool_use_limit_reached_error':
      return { sentence: 'The agent reached its limit of tool calls for this turn.', hint: 'Press Retry to let it go on, or say what to do next.', retry: true };
    case 'repository_authentication_error':
      return { sentence: `The repository host refused the token for ${error.repository_url ?? 'a repository'}.`, hint: 'Give the resource a new authorization_token (resources.update); the session goes on without the repository meanwhile.', retry: false };
    case 'repository_forbidden_error':
      return { sentence: `The token may not read ${error.repository_url ?? 'a repository'}.`, hint: 'Give the resource a token with access to it (resources.update).', retry: false };
    case 'repository_not_found_error':
      return { sentence: `The repository ${error.repository_url ?? ''} was not found.`, hint: 'Check its URL, or that the token can see it (a private repository reads as missing without access).', retry: false };
    case 'repository_checkout_error':
      return { sentence: `The branch or commit asked for does not exist in ${error.repository_url ?? 'the repository'}.`, hint: 'The session goes on without the repository.', retry: false };
    case 'repository_clone_error':
      return { sentence: `The repository ${error.repository_url ?? ''} could not be cloned.`, hint: 'The session goes on without the repository.', retry: false };
    case 'unknown_error':
      return { sentence: 'Something went wrong in this session.', hint: again, retry: !retrying };
    default:
      return unreachable(error.type);
  }
}

/** The MCP server an error names (errors stored before the name was recorded have none). */
function mcpServer(error: SessionErrorObject): string {
  return error.mcp_server_name ? `The MCP server ${error.mcp_server_name}` : 'An MCP server the agent uses';
}

/** What Retry sends: a message (the API's way to start a turn again after the retries ran out). */
export const RETRY_MESSAGE = 'Please go on from where you stopped: the last attempt failed.';
