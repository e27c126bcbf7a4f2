/** What an idle session (or thread) with `requires_action` waits for. */
export type WaitingOn = 'approval' | 'client';

/**
 * From the calls its `requires_action` names: a call whose policy asks first waits for the
 * owner's verdict (`approval`, first: a person must act); any other (a custom tool's call) for
 * the client's result. The session list (stored payloads) and the page (events) both read it so.
 */
export function waitingOnOf(calls: readonly ({ type?: string; evaluated_permission?: string } | undefined)[]): WaitingOn | null {
  let on: WaitingOn | null = null;
  for (const call of calls) {
    if (call === undefined) continue;
    if (call.evaluated_permission === 'ask') return 'approval';
    if (call.type === 'agent.custom_tool_use') on = 'client';
  }
  return on;
}
