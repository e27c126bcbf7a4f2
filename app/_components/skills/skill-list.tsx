'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ChangeEvent, useState } from 'react';
import { timeAgo } from '~/app/_components/time';
import { useTRPC } from '~/lib/browser/trpc';

/** A picked file as the upload takes it: its path in the folder (or its name) and its bytes in base64. */
async function encoded(f: File): Promise<{ path: string; base64: string }> {
  const bytes = new Uint8Array(await f.arrayBuffer());
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return { path: f.webkitRelativePath || f.name, base64: btoa(bin) };
}

function SkillVersions({ skillId }: { skillId: string }) {
  const trpc = useTRPC();
  const versions = useQuery(trpc.skills.versions.queryOptions({ skillId }));
  const all = versions.data?.data ?? [];
  const latest = all[0];
  if (!latest) return null;
  return (
    <>
      <div data-testid="skill-description">
        <span className="mono">{latest.name}</span> — {latest.description}
      </div>
      <div className="muted small">
        {all.length} version{all.length === 1 ? '' : 's'}; mounted read-only at <span className="mono">/mnt/skills/{latest.name}/</span>
      </div>
    </>
  );
}

/** The skills page: upload a folder with SKILL.md (or a zip of one), see what each is for, delete. */
export function SkillList() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const list = useQuery(trpc.skills.list.queryOptions());
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.skills.list.queryKey() });
  const upload = useMutation(trpc.skills.upload.mutationOptions({ onSuccess: () => void refresh() }));
  const remove = useMutation(trpc.skills.delete.mutationOptions({ onSuccess: () => void refresh() }));
  const [reading, setReading] = useState(false);
  const picked = async (e: ChangeEvent<HTMLInputElement>) => {
    const files = [...(e.target.files ?? [])];
    e.target.value = '';
    if (files.length === 0) return;
    setReading(true);
    try {
      upload.mutate({ files: await Promise.all(files.map(encoded)) });
    } finally {
      setReading(false);
    }
  };
  const failed = upload.error ?? remove.error ?? list.error;

  return (
    <section>
      <div className="list-head">
        <h1>Skills</h1>
      </div>
      <p className="muted">
        Instructions and scripts an agent loads when a task calls for them: a folder with a <span className="mono">SKILL.md</span> (its front matter names the skill and says when to
        use it). Agents list them under <span className="mono">skills</span>; a session finds each at <span className="mono">/mnt/skills/&lt;name&gt;/</span>.
      </p>
      <div className="skill-upload">
        <label className="button-like">
          Upload a folder…
          {/* webkitdirectory: the files come with their paths inside the folder. */}
          <input type="file" hidden multiple onChange={(e) => void picked(e)} data-testid="skill-folder" {...{ webkitdirectory: '' }} />
        </label>
        <label className="button-like">
          …or a .zip
          <input type="file" hidden accept=".zip,application/zip" onChange={(e) => void picked(e)} data-testid="skill-zip" />
        </label>
        {(reading || upload.isPending) && <span className="muted">Uploading…</span>}
      </div>
      {failed && <p className="error">{failed.message}</p>}
      {list.data && list.data.data.length === 0 && <p className="muted">No skills yet.</p>}
      <ul className="cards" data-testid="skills">
        {list.data?.data.map((s) => (
          <li key={s.id} className="card" data-testid="skill-row">
            <div className="card-head">
              <strong>{s.display_name}</strong>
              <span className="status">custom</span>
            </div>
            <SkillVersions skillId={s.id} />
            <div className="mono muted small">
              {s.id} · latest {s.latest_version_id} · updated {timeAgo(s.updated_at)}
            </div>
            <div className="card-actions">
              <button type="button" className="quiet" disabled={remove.isPending} onClick={() => window.confirm(`Delete skill "${s.display_name}" and all its versions? Agents that name it can no longer start sessions.`) && remove.mutate({ id: s.id })} data-testid="delete-skill">
                Delete
              </button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
