import { unreachable } from '~/lib/unreachable';

/** What the timeline can be narrowed to: groups a person thinks in, not the forty-odd type names. */
export type TimelineFilter = 'all' | 'messages' | 'tools' | 'model' | 'status' | 'hands';

export const TIMELINE_FILTERS: readonly [TimelineFilter, string][] = [
  ['all', 'all events'],
  ['messages', 'messages'],
  ['tools', 'tool calls and verdicts'],
  ['model', 'model requests'],
  ['status', 'status and errors'],
  ['hands', 'hands and MCP'],
];

/** Whether an event of this type shows under the filter (an unknown type shows under "all" only). */
export function showsUnder(filter: TimelineFilter, type: string): boolean {
  switch (filter) {
    case 'all':
      return true;
    case 'messages':
      return type === 'user.message' || type === 'agent.message' || type === 'agent.thinking' || type === 'user.interrupt' || type === 'user.file_edit' || type === 'agent.thread_context_compacted' || type === 'user.define_outcome' || type === 'system.message' || type === 'agent.thread_message_sent' || type === 'agent.thread_message_received';
    case 'tools':
      return /^(agent|user)\.(mcp_|custom_)?tool_(use|result|confirmation)$/.test(type);
    case 'model':
      return type.startsWith('span.');
    case 'status':
      return type.startsWith('session.');
    case 'hands':
      return type.startsWith('hand.') || type.startsWith('mcp.');
    default:
      return unreachable(filter);
  }
}
