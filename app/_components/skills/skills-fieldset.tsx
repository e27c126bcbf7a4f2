'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import type { AgentSkill } from '~/lib/agent';
import { useTRPC } from '~/lib/browser/trpc';

/**
 * The agent form's skills: each uploaded skill a checkbox. A pinned version stays pinned; a
 * skill that was deleted since is shown by id, so it can be taken off (a save naming it is a 404).
 */
export function SkillsFieldset({ value, onChange }: { value: AgentSkill[]; onChange: (next: AgentSkill[]) => void }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.skills.list.queryOptions());
  const known = list.data?.data ?? [];
  const chosen = new Map(value.map((s) => [s.skill_id, s]));
  const toggle = (id: string, on: boolean) => onChange(on ? [...value, { type: 'custom', skill_id: id, version: 'latest' }] : value.filter((s) => s.skill_id !== id));
  const missing = list.data ? value.filter((s) => !known.some((k) => k.id === s.skill_id)) : [];

  return (
    <fieldset data-testid="agent-skills">
      <legend>Skills</legend>
      <p className="muted small">
        Listed in the system prompt with their descriptions; the agent reads a skill&apos;s SKILL.md when a task calls for it. Upload them on the <Link href="/skills">Skills</Link> page.
      </p>
      {list.data && known.length === 0 && <p className="muted small">No skills uploaded yet.</p>}
      {known.map((k) => (
        <label key={k.id} className="check">
          <input type="checkbox" checked={chosen.has(k.id)} onChange={(e) => toggle(k.id, e.target.checked)} data-testid="agent-skill" />
          <span>{k.display_name}</span>
          {chosen.get(k.id)?.version && chosen.get(k.id)?.version !== 'latest' && <span className="muted small mono">pinned {chosen.get(k.id)?.version}</span>}
        </label>
      ))}
      {missing.map((s) => (
        <label key={s.skill_id} className="check">
          <input type="checkbox" checked onChange={() => toggle(s.skill_id, false)} />
          <span className="mono error">{s.skill_id} (deleted)</span>
        </label>
      ))}
    </fieldset>
  );
}
