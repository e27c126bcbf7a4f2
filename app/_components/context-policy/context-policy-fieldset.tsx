'use client';
import type { ContextPolicy } from '~/lib/context-policy';

const LABELS: Record<ContextPolicy['type'], string> = {
  full: 'Full log',
  window: 'Window',
  clear_old_tool_results: 'Clear old tool outputs',
  compaction: 'Compaction',
};

const HINTS: Record<ContextPolicy['type'], string> = {
  full: 'The model sees every event of the session on every request.',
  window: 'The task and the newest turns within the token budget; the rest is named by its event range.',
  clear_old_tool_results: 'Tool inputs stay; all but the newest outputs are replaced by a pointer to their event.',
  compaction: 'Near the budget, the model writes a summary that replaces what came before it.',
};

/** The policy a type starts with when picked (the server fills in the same defaults). */
const START: Record<ContextPolicy['type'], ContextPolicy> = {
  full: { type: 'full' },
  window: { type: 'window', max_input_tokens: 100_000 },
  clear_old_tool_results: { type: 'clear_old_tool_results', keep_recent: 5, clear_batch: 10 },
  compaction: { type: 'compaction', trigger_input_tokens: 150_000 },
};

function NumberField({ label, value, min, max, testId, onChange }: { label: string; value: number; min: number; max: number; testId: string; onChange: (n: number) => void }) {
  return (
    <label>
      {label}
      <input type="number" data-testid={testId} value={value} min={min} max={max} required onChange={(e) => onChange(Number(e.target.value))} />
    </label>
  );
}

/** The agent's context policy: what of its session's log the model sees. The log itself always keeps everything. */
export function ContextPolicyFieldset({ value, onChange }: { value: ContextPolicy; onChange: (p: ContextPolicy) => void }) {
  return (
    <fieldset data-testid="context-policy">
      <legend>Context</legend>
      <p className="muted small">
        {HINTS[value.type]} {value.type !== 'full' && 'The agent gets a session_events tool to read any part of its log again.'}
      </p>
      <div className="fields">
        <label>
          Policy
          <select data-testid="context-policy-type" value={value.type} onChange={(e) => onChange(START[e.target.value as ContextPolicy['type']])}>
            {(Object.keys(LABELS) as ContextPolicy['type'][]).map((t) => (
              <option key={t} value={t}>
                {LABELS[t]}
              </option>
            ))}
          </select>
        </label>
        {value.type === 'window' && (
          <NumberField label="Budget (input tokens)" testId="context-window-tokens" value={value.max_input_tokens} min={2_000} max={2_000_000} onChange={(n) => onChange({ ...value, max_input_tokens: n })} />
        )}
        {value.type === 'clear_old_tool_results' && (
          <>
            <NumberField label="Outputs kept" testId="context-keep-recent" value={value.keep_recent} min={0} max={1_000} onChange={(n) => onChange({ ...value, keep_recent: n })} />
            <NumberField label="Cleared in batches of" testId="context-clear-batch" value={value.clear_batch} min={1} max={1_000} onChange={(n) => onChange({ ...value, clear_batch: n })} />
          </>
        )}
        {value.type === 'compaction' && (
          <NumberField label="Compact above (input tokens)" testId="context-compaction-tokens" value={value.trigger_input_tokens} min={2_000} max={2_000_000} onChange={(n) => onChange({ ...value, trigger_input_tokens: n })} />
        )}
      </div>
    </fieldset>
  );
}
