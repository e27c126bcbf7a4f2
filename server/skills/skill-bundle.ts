import 'server-only';
import JSZip from 'jszip';
import { InvalidInputError, TooLargeError } from '~/lib/errors';

/** A skill version's files, at most this many bytes unpacked (the hosted API's limit is 8 MB too). */
export const MAX_SKILL_BYTES = 8 * 1024 * 1024;
export const MAX_SKILL_FILES = 500;
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export interface UploadedFile {
  /** The part's filename: the file's path, `my-skill/SKILL.md`. */
  name: string;
  data: Buffer;
}

/** A checked skill upload: its slug, what SKILL.md says, and its files by path under the slug's directory. */
export interface SkillBundle {
  name: string;
  description: string;
  files: Map<string, Buffer>;
}

/** A relative path with no way out: no `..`, `.`, empty segment, NUL, backslash or leading slash. */
function cleanPath(raw: string): string {
  const p = raw.replace(/^\.\//, '');
  if (p.length === 0 || p.length > 1024) throw new InvalidInputError(`files: a file's path must be 1 to 1024 characters (got ${JSON.stringify(raw.slice(0, 80))})`);
  if (p.startsWith('/') || p.includes('\\') || p.includes('\0') || /[\p{Cc}]/u.test(p)) throw new InvalidInputError(`files: ${JSON.stringify(p.slice(0, 200))} must be a relative path without NUL, control characters or backslashes`);
  if (p.split('/').some((s) => s === '' || s === '.' || s === '..')) throw new InvalidInputError(`files: ${JSON.stringify(p.slice(0, 200))} must not have an empty, . or .. segment`);
  return p;
}

/** The zip's files (directories left out), checked as they are unpacked: no bomb gets past the cap. */
async function unzip(data: Buffer): Promise<UploadedFile[]> {
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(data);
  } catch (e) {
    throw new InvalidInputError(`files: not a readable zip archive (${e instanceof Error ? e.message : 'unknown'})`);
  }
  const entries = Object.values(zip.files).filter((f) => !f.dir && !f.name.startsWith('__MACOSX/'));
  if (entries.length > MAX_SKILL_FILES) throw new InvalidInputError(`files: at most ${MAX_SKILL_FILES} files in a skill`);
  const out: UploadedFile[] = [];
  let total = 0;
  for (const e of entries) {
    const name = cleanPath(e.name);
    const bytes = Buffer.from(await e.async('uint8array'));
    total += bytes.length;
    if (total > MAX_SKILL_BYTES) throw new TooLargeError(`files: a skill's files are over the limit of ${MAX_SKILL_BYTES} bytes unpacked`);
    out.push({ name, data: bytes });
  }
  return out;
}

/** `name:` and `description:` of SKILL.md's YAML front matter (one line each, quotes optional). */
export function frontMatter(text: string): { name?: string; description?: string } {
  const m = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---\s*(?:\r?\n|$)/.exec(text);
  if (!m) return {};
  const out: Record<string, string> = {};
  for (const line of m[1]!.split(/\r?\n/)) {
    const kv = /^(name|description):\s*(.*)$/.exec(line);
    if (!kv) continue;
    let v = kv[2]!.trim();
    if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) v = v.slice(1, -1);
    out[kv[1]!] = v;
  }
  return out;
}

/**
 * An upload as a skill: the files of a directory (each part named by its path) or one zip of it.
 * All files sit in one top-level directory with SKILL.md at its root (a flat upload with SKILL.md
 * at the root is taken as that directory's content). The slug is SKILL.md's `name`, else the
 * directory's; the description is SKILL.md's, required: it is what the agent is shown.
 */
export async function bundleOf(uploaded: readonly UploadedFile[]): Promise<SkillBundle> {
  if (uploaded.length === 0) throw new InvalidInputError('files: upload the skill\'s files (a directory with SKILL.md) or one zip of it');
  const isZip = uploaded.length === 1 && /\.zip$/i.test(uploaded[0]!.name);
  const files = isZip ? await unzip(uploaded[0]!.data) : uploaded.map((f) => ({ name: cleanPath(f.name), data: f.data }));
  if (files.length > MAX_SKILL_FILES) throw new InvalidInputError(`files: at most ${MAX_SKILL_FILES} files in a skill`);
  const tops = new Set(files.map((f) => (f.name.includes('/') ? f.name.split('/')[0]! : '')));
  const flat = tops.size === 1 && tops.has('');
  if (!flat && (tops.size !== 1 || tops.has(''))) throw new InvalidInputError(`files: all files must be in the same top-level directory (found ${[...tops].map((t) => JSON.stringify(t || '/')).join(', ')})`);
  const dir = flat ? '' : [...tops][0]!;
  const rel = new Map<string, Buffer>();
  for (const f of files) {
    const p = flat ? f.name : f.name.slice(dir.length + 1);
    if (rel.has(p)) throw new InvalidInputError(`files: ${JSON.stringify(f.name)} is uploaded twice`);
    rel.set(p, f.data);
  }
  const skillMd = rel.get('SKILL.md');
  if (!skillMd) throw new InvalidInputError(`files: no SKILL.md at the root of ${dir ? JSON.stringify(`${dir}/`) : 'the upload'}`);
  const fm = frontMatter(skillMd.toString('utf8'));
  const name = fm.name ?? dir;
  if (!SLUG.test(name) || name.length > 64) throw new InvalidInputError(`SKILL.md: name ${JSON.stringify(name.slice(0, 80))} must be kebab-case (a-z, 0-9, -), at most 64 characters`);
  const description = fm.description ?? '';
  if (description.length === 0 || description.length > 1024) throw new InvalidInputError('SKILL.md: its front matter needs a description of 1 to 1024 characters (the agent is shown it)');
  return { name, description, files: rel };
}

/** The version's archive: its files under `<name>/`, what a download answers and a mount unpacks. */
export async function zipOf(b: SkillBundle): Promise<Buffer> {
  const zip = new JSZip();
  for (const [p, data] of [...b.files].sort(([a], [c]) => (a < c ? -1 : 1))) zip.file(`${b.name}/${p}`, data, { date: new Date(0) });
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/** A stored archive's files by path under the skill's directory (the archive is one we wrote). */
export async function filesOfZip(data: Buffer): Promise<Array<{ path: string; data: Buffer }>> {
  return (await unzip(data)).map((f) => ({ path: f.name, data: f.data }));
}
