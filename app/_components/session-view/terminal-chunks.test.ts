import { describe, expect, it } from 'vitest';
import { storedLog } from '~/lib/testing/stored-log';
import { terminalChunks } from '~/app/_components/session-view/terminal-chunks';

const log = storedLog;
const ESC = String.fromCharCode(27);
const strip = (s: string) => s.split(ESC).map((part, i) => (i === 0 ? part : part.replace(/^\[[0-9;]*m/, ''))).join('');

describe('the session terminal', () => {
  it("shows every bash call in order, the first one (made before any hand existed) and those of other hands too, each with its hand and output", () => {
    const events = log(
      { type: 'agent.tool_use', name: 'bash', input: { command: 'echo first' }, model_tool_use_id: 'toolu_1' },
      { type: 'hand.provisioned', hand: 'sandbox-1', kind: 'sandbox' },
      { type: 'agent.tool_result', tool_use_id: 'sevt_00000000000000000000000001', hand: 'sandbox-1', content: [{ type: 'text', text: 'first' }] },
      { type: 'agent.tool_use', name: 'read', input: { file_path: 'x' }, hand: 'sandbox-1', model_tool_use_id: 'toolu_2' },
      { type: 'agent.tool_use', name: 'bash', input: { command: 'ls' }, hand: 'sandbox-2', model_tool_use_id: 'toolu_3' },
      { type: 'agent.tool_result', tool_use_id: 'sevt_00000000000000000000000005', hand: 'sandbox-2', content: [{ type: 'text', text: 'a.txt\n' }] },
      { type: 'agent.tool_use', name: 'bash', input: { command: 'sleep 100' }, hand: 'sandbox-1', model_tool_use_id: 'toolu_4' },
    );
    expect(terminalChunks(events).map(strip)).toEqual(['sandbox-1 $ echo first\n', 'first\n', 'sandbox-2 $ ls\n', 'a.txt\n', 'sandbox-1 $ sleep 100\n']);
  });

  it('is empty for a session with no shell command', () => {
    expect(terminalChunks(log({ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }))).toEqual([]);
  });
});
