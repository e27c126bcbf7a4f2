import type Anthropic from '@anthropic-ai/sdk';
import { abortReason, sleep } from '~/lib/sleep';
import type { ModelRequest } from '~/server/harness/core/context';
import type { ModelClient, ModelDelta, ModelTurn, TurnBlock } from '~/server/harness/core/model-client';

export const DEMO_BRAIN_LABEL = 'paddock-demo-brain (offline, not Claude)';

const HELP = [
  "I am Paddock's offline demo brain, not Claude: no ANTHROPIC_API_KEY is configured, so I answer with fixed, deterministic rules.",
  'I can show you the session machinery (the durable log, streaming, tool calls and results) with these commands:',
  '- `write <path>: <text>` writes a file in this session\'s hand',
  '- `read <path>` reads it back',
  '- `files` lists the files in the hand',
  '- `ask <agent> to <task>` delegates the task to an agent of this agent\'s roster (an agent with `multiagent`), which works in a thread of its own and reports back; `agents` lists the roster',
  'Set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local Anthropic-compatible server) and restart Paddock to talk to a real model.',
].join('\n');

/**
 * A deterministic stand-in brain for when no model is configured. It speaks through the same
 * ModelClient contract (streamed deltas, tool calls) so everything downstream is real.
 */
export function createDemoBrain(opts: { chunkDelayMs?: number } = {}): ModelClient {
  const delay = opts.chunkDelayMs ?? 12;
  return {
    label: DEMO_BRAIN_LABEL,
    model: 'paddock-demo-brain',
    isDemo: true,
    async stream(request, { signal, onDelta }): Promise<ModelTurn> {
      const started = performance.now();
      const plan = respond(request);
      let ttftMs: number | null = null;
      const emit = async (d: ModelDelta) => {
        if (signal.aborted) throw abortReason(signal);
        if (delay > 0) await sleep(delay, signal);
        ttftMs ??= performance.now() - started;
        onDelta(d);
      };
      for (const [index, block] of plan.entries()) {
        if (block.type === 'text') {
          for (const piece of block.text.match(/\S+\s*|\s+/g) ?? []) await emit({ kind: 'text', index, text: piece });
        } else if (block.type === 'tool_use') {
          await emit({ kind: 'tool_input', index, name: block.name, partial_json: JSON.stringify(block.input) });
        }
      }
      const words = plan.reduce((n, b) => n + (b.type === 'text' ? b.text.split(/\s+/).length : 8), 0);
      return {
        content: plan,
        stopReason: plan.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
        ttftMs,
        usage: { input_tokens: 0, output_tokens: words, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      };
    },
  };
}

function respond(request: ModelRequest): TurnBlock[] {
  const last = request.messages[request.messages.length - 1];
  const blocks = last && Array.isArray(last.content) ? last.content : [];
  const results = blocks.filter((b): b is Anthropic.Messages.ToolResultBlockParam => b.type === 'tool_result');
  if (results.length > 0) {
    const text = results
      .map((r) => {
        const body = typeof r.content === 'string' ? r.content : (r.content ?? []).map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
        // Fenced: its answers render as markdown, and a tool's output is not prose.
        return `${r.is_error ? 'The tool reported an error' : 'The tool returned'}:\n\n\`\`\`\n${body.replaceAll('```', "'''")}\n\`\`\`\n`;
      })
      .join('\n\n');
    return [{ type: 'text', text }];
  }
  // What the user said last: a note the log adds before it (an edit in the IDE, a lost hand) is
  // context, not the command.
  const texts = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : []));
  const said = (texts.findLast((t) => !t.startsWith('[')) ?? texts.at(-1) ?? '').trim();
  const toolId = `toolu_demo_${request.messages.length}`;
  // Multiagent: the coordinator (it has send_to_agent) delegates, and acknowledges a report.
  const delegates = request.tools?.some((t) => 'name' in t && t.name === 'send_to_agent') ?? false;
  const report = texts.find((t) => t.startsWith('[Message from '));
  if (report && delegates) return [{ type: 'text', text: `${report.replace(/^\[Message from (.*):\]$/, 'Report from $1:')}\n\n${said}` }];
  const ask = /^ask\s+(\S+)\s+to\s+([\s\S]+)$/i.exec(said);
  if (ask && delegates) return [{ type: 'text', text: `Asking ${ask[1]}.` }, { type: 'tool_use', id: toolId, name: 'send_to_agent', input: { agent: ask[1], message: ask[2] } }];
  if (ask) return [{ type: 'text', text: 'This agent has no one to ask: give it a roster (`multiagent` on the agent) to delegate to.' }];
  if (/^agents\s*$/i.test(said) && delegates) return [{ type: 'text', text: 'Listing my agents.' }, { type: 'tool_use', id: toolId, name: 'list_agents', input: {} }];
  const write = /^write\s+(\S+?)\s*:\s*([\s\S]*)$/i.exec(said);
  if (write) return [{ type: 'text', text: `Writing ${write[1]}.` }, { type: 'tool_use', id: toolId, name: 'write', input: { file_path: write[1], content: write[2] } }];
  const read = /^read\s+(\S+)\s*$/i.exec(said);
  if (read) return [{ type: 'text', text: `Reading ${read[1]}.` }, { type: 'tool_use', id: toolId, name: 'read', input: { file_path: read[1] } }];
  if (/^(files|ls)\s*$/i.test(said)) return [{ type: 'text', text: 'Listing files.' }, { type: 'tool_use', id: toolId, name: 'glob', input: { pattern: '**/*' } }];
  return [{ type: 'text', text: `${HELP}\n\nYou said: ${said.length > 0 ? said : '(nothing)'}` }];
}
