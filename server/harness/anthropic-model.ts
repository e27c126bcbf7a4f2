import 'server-only';
import Anthropic from '@anthropic-ai/sdk';
import { type ModelClient, type ModelDelta, ModelError, type ModelTurn, type TurnBlock } from '~/server/harness/core/model-client';

export interface AnthropicModelOptions {
  apiKey?: string;
  authToken?: string;
  baseURL?: string;
  model: string;
}

/**
 * The Claude brain: `@anthropic-ai/sdk` streaming. The SDK's own retries are off because the
 * harness owns the retry policy (it records each attempt in the log as `status_rescheduled`).
 */
export function createAnthropicModel(opts: AnthropicModelOptions): ModelClient {
  const client = new Anthropic({
    // A local Anthropic-compatible server needs no real key, but the SDK insists on one.
    apiKey: opts.apiKey ?? (opts.authToken ? null : 'paddock-no-key'),
    authToken: opts.authToken ?? null,
    baseURL: opts.baseURL ?? null,
    maxRetries: 0,
    timeout: 10 * 60_000,
  });

  // Servers without count_tokens (many Anthropic-compatible ones) answer 404: asked once, then not again.
  let counting = true;
  return {
    label: opts.model,
    model: opts.model,
    isDemo: false,
    async countTokens(request, signal): Promise<number | null> {
      if (!counting) return null;
      try {
        const { model, system, tools, messages, tool_choice, thinking } = request;
        const r = await client.messages.countTokens({ model, messages, ...(system ? { system } : {}), ...(tools ? { tools } : {}), ...(tool_choice ? { tool_choice } : {}), ...(thinking ? { thinking } : {}) }, { signal });
        return r.input_tokens;
      } catch (e) {
        if (e instanceof Anthropic.APIError && (e.status === 404 || e.status === 405 || e.status === 501)) counting = false;
        return null;
      }
    },
    async stream(request, { signal, onDelta }): Promise<ModelTurn> {
      const started = performance.now();
      let ttftMs: number | null = null;
      const names = new Map<number, string>();
      try {
        const stream = client.messages.stream(request, { signal });
        stream.on('streamEvent', (ev) => {
          if (ev.type === 'content_block_start' && ev.content_block.type === 'tool_use') names.set(ev.index, ev.content_block.name);
          if (ev.type !== 'content_block_delta') return;
          ttftMs ??= performance.now() - started;
          const d = toDelta(ev.index, ev.delta, names);
          if (d) onDelta(d);
        });
        const message = await stream.finalMessage();
        const content = message.content.flatMap((b): TurnBlock[] => {
          switch (b.type) {
            case 'text':
              return [{ type: 'text', text: b.text }];
            case 'thinking':
              return [{ type: 'thinking', thinking: b.thinking, signature: b.signature }];
            case 'tool_use':
              return [{ type: 'tool_use', id: b.id, name: b.name, input: (b.input ?? {}) as Record<string, unknown> }];
            default:
              return [];
          }
        });
        const u = message.usage;
        return {
          content,
          stopReason: message.stop_reason,
          ttftMs,
          usage: {
            input_tokens: u.input_tokens ?? 0,
            output_tokens: u.output_tokens ?? 0,
            // Ollama and llama.cpp send no cache fields at all.
            cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
            cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
          },
        };
      } catch (e) {
        throw classify(e, signal);
      }
    },
  };
}

function toDelta(index: number, delta: Anthropic.Messages.RawContentBlockDelta, names: Map<number, string>): ModelDelta | null {
  switch (delta.type) {
    case 'text_delta':
      return { kind: 'text', index, text: delta.text };
    case 'thinking_delta':
      return { kind: 'thinking', index, text: delta.thinking };
    case 'input_json_delta':
      return { kind: 'tool_input', index, name: names.get(index) ?? '', partial_json: delta.partial_json };
    default:
      return null;
  }
}

function classify(e: unknown, signal: AbortSignal): Error {
  if (signal.aborted || e instanceof Anthropic.APIUserAbortError) return signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError');
  // Once a stream has begun, the API reports overload as an SSE error frame: no HTTP status.
  if (e instanceof Anthropic.APIError && typeof e.status !== 'number') {
    if (e.type === 'overloaded_error') return new ModelError(`model overloaded mid-stream: ${e.message}`, 'model_overloaded_error', true, null);
    if (e.type === 'rate_limit_error') return new ModelError(`model rate limited mid-stream: ${e.message}`, 'model_rate_limited_error', true, null);
  }
  if (e instanceof Anthropic.APIError && typeof e.status === 'number') {
    const s = e.status;
    const msg = `model request failed with HTTP ${s}: ${e.message}`;
    if (s === 529) return new ModelError(msg, 'model_overloaded_error', true, s);
    if (s === 429) return new ModelError(msg, 'model_rate_limited_error', true, s);
    if (s >= 500 || s === 408 || s === 409) return new ModelError(msg, 'model_request_failed_error', true, s);
    return new ModelError(msg, 'model_request_failed_error', false, s);
  }
  // Connection refused, reset, or a stream cut mid-way: worth another attempt.
  const msg = e instanceof Error ? e.message : String(e);
  return new ModelError(`model stream failed: ${msg}`, 'model_request_failed_error', true, null);
}
