/**
 * What a session has attached, as its system prompt names it: skills (name, description, where
 * SKILL.md is: the model reads it when a task calls for it) and memory stores (name, where they
 * are mounted, access, description and instructions). Pure: the runtime reads the data and passes
 * it in (`StepDeps.attachments`).
 */
export interface PromptSkill {
  name: string;
  description: string;
  /** The skill's directory in the hand (read-only). */
  path: string;
}

export interface PromptMemoryStore {
  name: string;
  description: string;
  instructions: string | null;
  access: 'read_write' | 'read_only';
  mount_path: string;
}

export interface PromptAttachments {
  skills: PromptSkill[];
  memoryStores: PromptMemoryStore[];
}

export const NO_ATTACHMENTS: PromptAttachments = { skills: [], memoryStores: [] };

/** One line of text from a field the user wrote: no newline can start a section of its own. */
const line = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The system prompt with its attachments' sections appended (unchanged when there are none, so caching holds). */
export function withAttachments(system: string, a: PromptAttachments): string {
  const parts = [system];
  if (a.skills.length > 0) {
    parts.push(
      [
        '# Skills',
        'These skills are available. Each is a directory with a SKILL.md of instructions (and maybe scripts or references). When a task matches a skill\'s description, read its SKILL.md first and follow it; do not read skills you do not need.',
        ...a.skills.map((s) => `- ${line(s.name)}: ${line(s.description)} (${s.path}/SKILL.md)`),
      ].join('\n'),
    );
  }
  if (a.memoryStores.length > 0) {
    parts.push(
      [
        '# Memory',
        'These memory stores are mounted as directories of text files that persist across sessions. Read what is relevant before you start; keep what you learn that a later session would need, with your usual file tools.',
        ...a.memoryStores.flatMap((m) => [
          `- ${line(m.name)} at ${m.mount_path}/ (${m.access === 'read_only' ? 'read-only' : 'read and write'})${m.description ? `: ${line(m.description)}` : ''}`,
          ...(m.instructions ? [`  Instructions: ${line(m.instructions)}`] : []),
        ]),
      ].join('\n'),
    );
  }
  return parts.join('\n\n');
}
