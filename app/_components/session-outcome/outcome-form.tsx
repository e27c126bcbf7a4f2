'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import { useTRPC } from '~/lib/browser/trpc';
import '~/app/_components/session-outcome/outcome-form.css';

/** As the API: a grader judges up to this many iterations (3 unless the owner says otherwise). */
const DEFAULT_ITERATIONS = 3;
const MAX_ITERATIONS = 20;

/**
 * The owner defines an outcome for this session: what should be done, the rubric a grader judges
 * each finished turn against, and how many iterations it may take. Work starts at once; the
 * conversation then shows the outcome, each evaluation and its verdict.
 */
export function OutcomeForm({ sessionId, ended, onDefined }: { sessionId: string; ended: boolean; onDefined?: () => void }) {
  const trpc = useTRPC();
  const id = useId();
  const [open, setOpen] = useState(false);
  const [description, setDescription] = useState('');
  const [rubric, setRubric] = useState('');
  // '' : the rubric is written here; else the id of a file (Files API) whose text is the rubric.
  const [rubricFile, setRubricFile] = useState('');
  const files = useQuery({ ...trpc.files.list.queryOptions({ limit: 100 }), enabled: open }).data ?? [];
  const [iterations, setIterations] = useState(DEFAULT_ITERATIONS);
  const define = useMutation(
    trpc.outcomes.define.mutationOptions({
      onSuccess: () => {
        setOpen(false);
        setDescription('');
        setRubric('');
        setRubricFile('');
        setIterations(DEFAULT_ITERATIONS);
        onDefined?.();
      },
    }),
  );

  const submit = (e: FormEvent) => {
    e.preventDefault();
    define.mutate({ sessionId, description, ...(rubricFile ? { rubricFileId: rubricFile } : { rubric }), max_iterations: iterations });
  };

  return (
    <div className="outcome-form">
      <button type="button" className="small" data-testid="outcome-toggle" aria-expanded={open} disabled={ended} title={ended ? 'This session takes no more work' : undefined} onClick={() => setOpen(!open)}>
        Outcome
      </button>
      {open && (
        <div className="outcome-panel" data-testid="outcome-panel" role="dialog" aria-label="Define an outcome">
          <p className="small muted">The agent works toward this at once; after each turn a grader checks its work against the rubric and sends it back with the reasons until it is met.</p>
          <form onSubmit={submit}>
            <label htmlFor={`${id}-description`}>What should be done</label>
            <textarea id={`${id}-description`} rows={2} required maxLength={100_000} value={description} onChange={(e) => setDescription(e.target.value)} data-testid="outcome-description" />
            <label htmlFor={`${id}-rubric-source`}>Rubric: how the grader judges it</label>
            <select id={`${id}-rubric-source`} value={rubricFile} onChange={(e) => setRubricFile(e.target.value)} data-testid="outcome-rubric-source">
              <option value="">written here</option>
              {files.map((f) => (
                <option key={f.id} value={f.id}>
                  the text of {f.filename}
                </option>
              ))}
            </select>
            {rubricFile === '' && <textarea id={`${id}-rubric`} aria-label="Rubric text" rows={4} required value={rubric} onChange={(e) => setRubric(e.target.value)} data-testid="outcome-rubric" />}
            <label htmlFor={`${id}-iterations`}>Iterations at most (1–{MAX_ITERATIONS})</label>
            <input
              id={`${id}-iterations`}
              type="number"
              min={1}
              max={MAX_ITERATIONS}
              step={1}
              required
              value={iterations}
              onChange={(e) => setIterations(Number(e.target.value))}
              data-testid="outcome-iterations"
            />
            <div className="outcome-actions">
              <button type="button" onClick={() => setOpen(false)}>
                Cancel
              </button>
              <button type="submit" className="primary" disabled={define.isPending} data-testid="outcome-define">
                Define outcome
              </button>
            </div>
          </form>
          {define.error && (
            <p className="error" role="alert" data-testid="outcome-error">
              {define.error.message}
            </p>
          )}
        </div>
      )}
    </div>
  );
}
