import 'server-only';
import { DEFAULT_OUTCOME_ITERATIONS, type NewEvent, type StoredEvent } from '~/lib/events';
import { InvalidInputError, isDomainError } from '~/lib/errors';
import { newId } from '~/lib/ids';
import { type FileDeps, downloadFile } from '~/server/commands/file-commands';
import type { SessionDeps } from '~/server/commands/session-deps';
import { sendEvents } from '~/server/commands/session-commands';

/** A rubric's text, at most (the API's cap on a text rubric; a file rubric is held to the same). */
export const MAX_RUBRIC_CHARS = 262_144;

/** What a client sends to define an outcome (the send params' shape, parsed at the edge). */
export interface DefineOutcomeInput {
  type: 'user.define_outcome';
  description: string;
  rubric: { type: 'text'; content: string } | { type: 'file'; file_id: string };
  max_iterations?: number | null | undefined;
}

/**
 * A `user.define_outcome` as stored: its `outc_` id given here, and a file rubric resolved to its
 * text now (as the API does), so the grader never depends on a file that may be deleted later.
 * `where` names the event in a refusal (`events[0]`).
 */
export async function defineOutcomeEvent(d: FileDeps, input: DefineOutcomeInput, where: string): Promise<NewEvent> {
  let rubric = input.rubric;
  let fileId: string | undefined;
  if (rubric.type === 'file') {
    fileId = rubric.file_id;
    rubric = { type: 'text', content: await rubricText(d, rubric.file_id, `${where}.rubric.file_id`) };
  }
  return {
    type: 'user.define_outcome',
    outcome_id: newId('outc'),
    description: input.description,
    rubric,
    max_iterations: input.max_iterations ?? DEFAULT_OUTCOME_ITERATIONS,
    ...(fileId ? { rubric_file_id: fileId } : {}),
  };
}

/**
 * Defines an outcome on a session (the UI's form; `/v1` sends the same event in a batch): stored
 * as `user.define_outcome` through the one send path, so it starts work at once and takes the
 * same refusals (terminated, archived, size caps) as any send.
 */
export async function defineOutcome(d: SessionDeps & FileDeps, sessionId: string, input: Omit<DefineOutcomeInput, 'type'>): Promise<StoredEvent> {
  const event = await defineOutcomeEvent(d, { type: 'user.define_outcome', ...input }, 'outcome');
  const [stored] = await sendEvents(d, sessionId, [event], { where: () => 'outcome' });
  if (!stored) throw new Error(`defineOutcome stored nothing for ${sessionId}`);
  return stored;
}

async function rubricText(d: FileDeps, fileId: string, where: string): Promise<string> {
  let body: AsyncIterable<Buffer | string>;
  try {
    body = (await downloadFile(d, fileId)).body;
  } catch (e) {
    if (isDomainError(e)) throw new InvalidInputError(`${where}: ${e.message}`);
    throw e;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // Read no more than a rubric may hold (4 bytes a character at most).
  for await (const chunk of body) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    chunks.push(b);
    size += b.length;
    if (size > MAX_RUBRIC_CHARS * 4) break;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new InvalidInputError(`${where}: file ${fileId} is empty`);
  if (text.length > MAX_RUBRIC_CHARS) throw new InvalidInputError(`${where}: file ${fileId} is longer than ${MAX_RUBRIC_CHARS} characters`);
  return text;
}

const ACCOMPANIED = new Set<NewEvent['type']>(['user.message', 'user.tool_result', 'user.custom_tool_result']);

/**
 * A `system.message` accompanies a user turn: it is the last event of a send and follows the
 * `user.message`, `user.tool_result` or `user.custom_tool_result` it goes with (at most one per send).
 */
export function checkSystemMessages(events: readonly { type: string }[], where: (i: number) => string): void {
  events.forEach((e, i) => {
    if (e.type !== 'system.message') return;
    if (i !== events.length - 1) throw new InvalidInputError(`${where(i)}: a system.message must be the last event sent`);
    const before = events[i - 1];
    if (!before || !ACCOMPANIED.has(before.type as NewEvent['type'])) throw new InvalidInputError(`${where(i)}: a system.message must follow the user.message, user.tool_result or user.custom_tool_result it accompanies`);
  });
}
