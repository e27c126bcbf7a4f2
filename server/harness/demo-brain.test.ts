import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '~/lib/events';
import { storedLog } from '~/lib/testing/stored-log';
import { BRAIN_TOOLS } from '~/lib/tools';
import { buildContext } from '~/server/harness/core/context';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { DELEGATION_TOOLS } from '~/server/harness/core/delegation';

const log = storedLog;

async function answer(events: StoredEvent[]) {
  const request = buildContext(events, { model: 'paddock-demo-brain', maxTokens: 1024, system: 'demo', tools: [...BRAIN_TOOLS] });
  return (await createDemoBrain({ chunkDelayMs: 0 }).stream(request, { signal: new AbortController().signal, onDelta: () => undefined })).content;
}

describe('the demo brain', () => {
  it('reads a file the user just edited in the IDE, as it reads any other', async () => {
    const content = await answer(
      log(
        { type: 'user.file_edit', hand: 'sandbox-1', path: 'notes.txt', content: 'edited in the IDE\n' },
        { type: 'user.message', content: [{ type: 'text', text: 'read notes.txt' }] },
      ),
    );
    expect(content).toContainEqual(expect.objectContaining({ type: 'tool_use', name: 'read', input: { file_path: 'notes.txt' } }));
  });

  it('delegates "ask <agent> to <task>" with send_to_agent when it has a roster, and says it cannot without one', async () => {
    const events = log({ type: 'user.message', content: [{ type: 'text', text: 'ask alpha to write notes.txt: hi' }] });
    const request = buildContext(events, { model: 'paddock-demo-brain', maxTokens: 1024, system: 'demo', tools: [...BRAIN_TOOLS, ...DELEGATION_TOOLS] });
    const content = (await createDemoBrain({ chunkDelayMs: 0 }).stream(request, { signal: new AbortController().signal, onDelta: () => undefined })).content;
    expect(content).toContainEqual(expect.objectContaining({ type: 'tool_use', name: 'send_to_agent', input: { agent: 'alpha', message: 'write notes.txt: hi' } }));
    expect(await answer(events)).toEqual([{ type: 'text', text: expect.stringContaining('no one to ask') as unknown }]);
  });

  it('answers its help to anything else', async () => {
    const content = await answer(log({ type: 'user.message', content: [{ type: 'text', text: 'hello there' }] }));
    expect(content).toEqual([{ type: 'text', text: expect.stringContaining('You said: hello there') as unknown }]);
  });

  it("shows a tool's output as a code block, so its lines stay lines when rendered as markdown", async () => {
    const events = log(
      { type: 'user.message', content: [{ type: 'text', text: 'files' }] },
      { type: 'agent.tool_use', name: 'glob', input: { pattern: '**/*' }, model_tool_use_id: 'toolu_1' },
      { type: 'agent.tool_result', tool_use_id: 'sevt_00000000000000000000000002', content: [{ type: 'text', text: 'a.txt\nb.txt' }] },
    );
    const [block] = await answer(events);
    expect(block).toEqual({ type: 'text', text: 'The tool returned:\n\n```\na.txt\nb.txt\n```\n' });
  });
});
