import '~/app/_components/ide/ide.css';

/** What an empty pane shows instead of a blank box: what will appear here, and what brings it. */
export function PanePlaceholder({ title, hint, testId }: { title: string; hint: string; testId: string }) {
  return (
    <div className="pane-empty" data-testid={testId}>
      <strong>{title}</strong>
      <span className="muted small">{hint}</span>
    </div>
  );
}
