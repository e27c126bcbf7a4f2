import 'server-only';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import busboy from 'busboy';
import { z } from 'zod';
import { InvalidInputError, TooLargeError } from '~/lib/errors';
import { ID_PATTERN } from '~/lib/ids';
import { createSkill, createSkillVersion, deleteSkill, deleteSkillVersion, downloadSkillVersion } from '~/server/commands/skill-commands';
import { MAX_SKILL_BYTES, MAX_SKILL_FILES, type UploadedFile } from '~/server/skills/skill-bundle';
import { CommonQuery, Limit, Page, parseInput, queryObject } from '~/server/rest/query';
import type { RestRequest, Route } from '~/server/rest/route-table';

/** /v1/skills and their versions (beta `skills-2025-10-02`; the header is accepted, not required). */
const ListQuery = z.object({ limit: Limit(100, 20), page: Page, source: z.string().max(32).nullish(), ...CommonQuery }).strict();
const VERSION = /^(?:\d{1,20}|latest)$/;

function skillId(params: Record<string, string>): string {
  const v = params.id ?? '';
  if (!ID_PATTERN.skill.test(v)) throw new InvalidInputError(`skill_id: ${JSON.stringify(v.slice(0, 80))} must be a skill id (skill_…)`);
  return v;
}
function version(params: Record<string, string>): string {
  const v = params.version ?? '';
  if (!VERSION.test(v)) throw new InvalidInputError(`version: ${JSON.stringify(v.slice(0, 80))} must be a skill version (digits) or latest`);
  return v;
}

/**
 * A skill upload's parts: `files[]` (each named by its path; or one `.zip`) and `display_name`.
 * Read into memory under MAX_SKILL_BYTES: a skill is instructions and a few scripts, not data.
 */
async function readUpload({ headers, stream }: RestRequest): Promise<{ files: UploadedFile[]; fields: Record<string, string> }> {
  const type = headers.get('content-type') ?? '';
  if (!stream || !/^multipart\/form-data\b/i.test(type)) throw new InvalidInputError('body: must be multipart/form-data with `files[]` parts (a directory with SKILL.md, or one zip)');
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: { 'content-type': type }, preservePath: true, limits: { files: MAX_SKILL_FILES, fields: 10, fieldSize: 1024, fileSize: MAX_SKILL_BYTES, parts: MAX_SKILL_FILES + 10 } });
  } catch (e) {
    throw new InvalidInputError(`body: ${e instanceof Error ? e.message : 'not a multipart form'}`);
  }
  const files: UploadedFile[] = [];
  const fields: Record<string, string> = {};
  let total = 0;
  const done = new Promise<void>((resolve, reject) => {
    const fail = (e: Error) => {
      parser.removeAllListeners('file');
      reject(e);
    };
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('file', (name, source, info) => {
      if (name !== 'files[]' && name !== 'files') {
        source.resume();
        return fail(new InvalidInputError(`body: unknown part ${JSON.stringify(name)}; the skill's files go in \`files[]\``));
      }
      const chunks: Buffer[] = [];
      source.on('data', (c: Buffer) => {
        total += c.length;
        if (total > MAX_SKILL_BYTES) {
          source.resume();
          fail(new TooLargeError(`files: a skill's files are over the limit of ${MAX_SKILL_BYTES} bytes`));
        } else chunks.push(c);
      });
      source.on('limit', () => fail(new TooLargeError(`files: a skill's files are over the limit of ${MAX_SKILL_BYTES} bytes`)));
      source.on('end', () => files.push({ name: info.filename ?? '', data: Buffer.concat(chunks) }));
    });
    parser.on('close', () => resolve());
    parser.on('error', (e: unknown) => reject(new InvalidInputError(`body: ${e instanceof Error ? e.message : 'not a multipart form'}`)));
    parser.on('filesLimit', () => fail(new InvalidInputError(`files: at most ${MAX_SKILL_FILES} files in a skill`)));
  });
  Readable.fromWeb(stream as NodeReadableStream<Uint8Array>).on('error', (e) => parser.destroy(e)).pipe(parser);
  await done;
  return { files, fields };
}

async function create(req: RestRequest) {
  const { files, fields } = await readUpload(req);
  return createSkill({ skills: req.rt.skills, blobs: req.rt.blobs }, files, fields.display_name ?? null);
}

async function createVersion(req: RestRequest) {
  const id = skillId(req.params);
  const { files } = await readUpload(req);
  return createSkillVersion({ skills: req.rt.skills, blobs: req.rt.blobs }, id, files);
}

async function content({ rt, params }: RestRequest) {
  const { name, size, body } = await downloadSkillVersion({ skills: rt.skills, blobs: rt.blobs }, skillId(params), version(params));
  return new Response(Readable.toWeb(body) as ReadableStream<Uint8Array>, {
    headers: { 'content-type': 'application/zip', 'content-length': String(size), 'content-disposition': `attachment; filename="${name}.zip"`, 'cache-control': 'no-store' },
  });
}

export const skillRoutes: Route[] = [
  { method: 'POST', path: 'skills', handler: create, upload: true },
  {
    method: 'GET',
    path: 'skills',
    handler: ({ rt, query }: RestRequest) => {
      const q = parseInput(ListQuery, queryObject(query), 'query');
      // Every skill here is custom: none ships with Paddock.
      if (q.source && q.source !== 'custom') return Promise.resolve({ data: [], next_page: null });
      return rt.skills.list({ limit: q.limit, page: q.page });
    },
  },
  { method: 'GET', path: 'skills/:id', handler: ({ rt, params }: RestRequest) => rt.skills.get(skillId(params)) },
  { method: 'DELETE', path: 'skills/:id', handler: ({ rt, params }: RestRequest) => deleteSkill({ skills: rt.skills, blobs: rt.blobs }, skillId(params)) },
  { method: 'POST', path: 'skills/:id/versions', handler: createVersion, upload: true },
  {
    method: 'GET',
    path: 'skills/:id/versions',
    handler: ({ rt, params, query }: RestRequest) => {
      const q = parseInput(ListQuery.omit({ source: true }), queryObject(query), 'query');
      return rt.skills.listVersions(skillId(params), { limit: q.limit, page: q.page });
    },
  },
  { method: 'GET', path: 'skills/:id/versions/:version', callers: { workItem: 'session_skill' }, handler: ({ rt, params }: RestRequest) => rt.skills.getVersion(skillId(params), version(params)) },
  { method: 'DELETE', path: 'skills/:id/versions/:version', handler: ({ rt, params }: RestRequest) => deleteSkillVersion({ skills: rt.skills, blobs: rt.blobs }, skillId(params), version(params)) },
  // A self-hosted worker's item token downloads the skills of its session's agent (the SDK's worker does).
  { method: 'GET', path: 'skills/:id/versions/:version/content', callers: { workItem: 'session_skill' }, handler: content },
];
