import { DATA_DIR_SENTENCE, currentDataDirWatch } from '~/server/data-dir-watch';

/**
 * For the owner, on every page while the data directory is gone or unwritable: nothing new is
 * saved, and stopping the server would lose what only this process still holds.
 */
export function DataDirBanner() {
  const watch = currentDataDirWatch();
  const problem = watch?.problem;
  if (!watch || !problem) return null;
  return (
    <div className="page" style={{ marginBottom: 0 }}>
      <div className="offline-banner" role="alert" data-testid="data-dir-banner">
        <strong>{DATA_DIR_SENTENCE[problem.kind]}</strong> (<span className="mono">{watch.dir}</span>). Nothing new can be saved.{' '}
        {problem.kind === 'unwritable'
          ? 'Give the server write access to it again; Paddock goes on by itself once it can write.'
          : 'Restore the folder from a backup and restart Paddock: the database this server still holds open is the only copy left (the server log says where to copy it from before stopping).'}
      </div>
    </div>
  );
}
