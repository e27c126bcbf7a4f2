import { describe, expect, it } from 'vitest';
import { EVENT_SAMPLES } from '~/lib/testing/event-samples';
import { type TimelineFilter, TIMELINE_FILTERS, showsUnder } from '~/app/_components/session-view/timeline-filter';

describe('timeline filter', () => {
  it.each([
    ['messages', ['user.message', 'agent.message', 'agent.thinking', 'user.interrupt'], ['agent.tool_use', 'session.status_idle']],
    ['tools', ['agent.tool_use', 'agent.tool_result', 'user.tool_confirmation', 'agent.mcp_tool_use', 'agent.mcp_tool_result', 'agent.custom_tool_use', 'user.custom_tool_result'], ['user.message', 'span.model_request_start']],
    ['model', ['span.model_request_start', 'span.model_request_end'], ['agent.message']],
    ['status', ['session.status_running', 'session.status_idle', 'session.error'], ['hand.lost']],
    ['hands', ['hand.provisioned', 'hand.lost', 'mcp.tools_listed'], ['agent.tool_use']],
  ] as const)('%s shows its own types and not others', (filter, shown, hidden) => {
    for (const t of shown) expect(showsUnder(filter, t), t).toBe(true);
    for (const t of hidden) expect(showsUnder(filter, t), t).toBe(false);
  });

  it('puts every event type the schema knows under exactly one group, and all of them under "all"', () => {
    const groups = TIMELINE_FILTERS.map(([f]) => f).filter((f): f is Exclude<TimelineFilter, 'all'> => f !== 'all');
    for (const type of Object.keys(EVENT_SAMPLES)) {
      expect(showsUnder('all', type)).toBe(true);
      expect(groups.filter((g) => showsUnder(g, type)), type).toHaveLength(1);
    }
  });
});
