import { describe, expect, it } from 'vitest';
import { skillIdsOf } from '~/server/access/work-item-scope';

describe("a work item's skills", () => {
  it("are the agent's and its subagents', however the roster nests them, and nothing else", () => {
    const agent = {
      skills: [{ type: 'custom', skill_id: 'skill_a', version: 'latest' }],
      system: 'mentions skill_z in text only',
      multiagent: {
        type: 'coordinator',
        agents: [{ type: 'agent', id: 'agent_1', skills: [{ type: 'custom', skill_id: 'skill_b' }] }, { type: 'self' }],
      },
      other: { subagents: { predefined_agents: [{ skills: [{ skill_id: 'skill_c' }, { skill_id: 42 }] }] } },
    };
    expect([...skillIdsOf(agent)].sort()).toEqual(['skill_a', 'skill_b', 'skill_c']);
    expect(skillIdsOf(null).size).toBe(0);
    expect(skillIdsOf({ skills: 'skill_a' }).size).toBe(0);
  });
});
