import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import JSZip from 'jszip';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDemoBrain } from '~/server/harness/demo-brain';
import { testRuntime } from '~/server/harness/testing/test-runtime';
import { handleRest } from '~/server/rest/handler';
import { type FetchServer, serveFetch } from '~/server/rest/testing/serve-fetch';
import type { Runtime } from '~/server/runtime';
import { openSqliteStore } from '~/server/session/sqlite-store';

const KEY = 'skills-api-key-0123456789';
const SKILL_MD = '---\nname: pdf-tools\ndescription: Fill and merge PDF forms. Use when the user mentions PDFs.\n---\n# PDF tools\nRun scripts/fill.py.\n';
let dir: string;
let rt: Runtime;
let server: FetchServer;
let client: Anthropic;

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paddock-skills-api-'));
  const store = await openSqliteStore({ file: path.join(dir, 'db.sqlite') });
  rt = testRuntime({ store, model: createDemoBrain(), dataDir: dir, env: { PADDOCK_API_KEY: KEY } });
  server = await serveFetch((req) => handleRest(req, { runtime: () => Promise.resolve(rt), maxBodyBytes: 16 * 1024, maxUploadBytes: 16 * 1024 * 1024 }));
  client = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
});

afterEach(async () => {
  await server.close();
  await rt.harness.close();
  await rt.store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const dirFiles = async (md = SKILL_MD, top = 'pdf-tools') => [await toFile(Buffer.from(md), `${top}/SKILL.md`), await toFile(Buffer.from('print("filled")\n'), `${top}/scripts/fill.py`)];
const blobCount = () => (fs.existsSync(path.join(dir, 'blobs')) ? fs.readdirSync(path.join(dir, 'blobs'), { recursive: true, withFileTypes: true }).filter((d) => d.isFile() && !d.parentPath.endsWith('tmp')).length : 0);

describe('skills through the official SDK', () => {
  it('creates a skill from a directory upload, lists and retrieves it, and downloads its version as a zip of the same files', async () => {
    const s = await client.beta.skills.create({ files: await dirFiles(), display_name: 'PDF tools' });
    expect(s).toMatchObject({ type: 'skill', display_name: 'PDF tools', source: { type: 'custom' } });
    expect(s.id).toMatch(/^skill_[0-9A-Z]{26}$/);
    expect(s.latest_version_id).toMatch(/^\d{16}$/);
    expect(await client.beta.skills.retrieve(s.id)).toEqual(s);
    const listed = [];
    for await (const x of client.beta.skills.list()) listed.push(x.id);
    expect(listed).toEqual([s.id]);
    const v = await client.beta.skills.versions.retrieve(s.latest_version_id, { skill_id: s.id });
    expect(v).toMatchObject({ type: 'skill_version', skill_id: s.id, name: 'pdf-tools', description: 'Fill and merge PDF forms. Use when the user mentions PDFs.' });

    const res = await client.beta.skills.versions.download(s.latest_version_id, { skill_id: s.id });
    expect(res.headers.get('content-type')).toBe('application/zip');
    const zip = await JSZip.loadAsync(Buffer.from(await res.arrayBuffer()));
    expect(Object.keys(zip.files).filter((n) => !zip.files[n]!.dir).sort()).toEqual(['pdf-tools/SKILL.md', 'pdf-tools/scripts/fill.py']);
    expect(await zip.file('pdf-tools/SKILL.md')!.async('string')).toBe(SKILL_MD);
  });

  it('creates a skill from one zip, adds a version that keeps its name, deletes a version then the skill and frees the bytes', async () => {
    const zip = new JSZip();
    zip.file('pdf-tools/SKILL.md', SKILL_MD);
    const s = await client.beta.skills.create({ files: [await toFile(await zip.generateAsync({ type: 'nodebuffer' }), 'pdf-tools.zip', { type: 'application/zip' })] });
    expect(s.display_name).toBe('pdf-tools');
    const v2 = await client.beta.skills.versions.create(s.id, { files: await dirFiles(SKILL_MD.replace('Fill and merge', 'Fill, merge and split')) });
    expect(v2.description).toMatch(/split/);
    expect((await client.beta.skills.retrieve(s.id)).latest_version_id).toBe(v2.id);
    const versions = [];
    for await (const v of client.beta.skills.versions.list(s.id)) versions.push(v.id);
    expect(versions).toEqual([v2.id, s.latest_version_id]);
    expect(blobCount()).toBe(2);

    const renamed = (await client.beta.skills.versions.create(s.id, { files: await dirFiles(SKILL_MD.replace('name: pdf-tools', 'name: other'), 'other') }).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.ConflictError>;
    expect(renamed).toBeInstanceOf(Anthropic.ConflictError);
    expect(renamed.message).toMatch(/pdf-tools/);

    expect(await client.beta.skills.versions.delete(v2.id, { skill_id: s.id })).toEqual({ id: v2.id, type: 'skill_version_deleted' });
    expect((await client.beta.skills.retrieve(s.id)).latest_version_id).toBe(s.latest_version_id);
    await expect(client.beta.skills.versions.delete(s.latest_version_id, { skill_id: s.id })).rejects.toBeInstanceOf(Anthropic.ConflictError);
    expect(await client.beta.skills.delete(s.id)).toEqual({ id: s.id, type: 'skill_deleted' });
    await expect(client.beta.skills.retrieve(s.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    expect(blobCount()).toBe(0);
  });

  it('refuses an upload without SKILL.md, with a path escaping its directory, split over two directories, or without a description: 400s naming it, nothing stored', async () => {
    const cases: Array<[Array<Awaited<ReturnType<typeof toFile>>>, RegExp]> = [
      [[await toFile(Buffer.from('x'), 'pdf-tools/README.md')], /no SKILL\.md/],
      [[await toFile(Buffer.from(SKILL_MD), 'pdf-tools/SKILL.md'), await toFile(Buffer.from('x'), 'pdf-tools/../../etc/passwd')], /\.\./],
      [[await toFile(Buffer.from(SKILL_MD), 'a/SKILL.md'), await toFile(Buffer.from('x'), 'b/x.py')], /same top-level directory/],
      [[await toFile(Buffer.from('---\nname: x\n---\n'), 'x/SKILL.md')], /description/],
      [[await toFile(Buffer.from('not a zip'), 'skill.zip')], /zip/],
    ];
    for (const [files, why] of cases) {
      const err = (await client.beta.skills.create({ files }).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.BadRequestError>;
      expect(err, String(why)).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.message).toMatch(why);
    }
    const raw = await fetch(`${server.url}/v1/skills`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{}' });
    expect(raw.status).toBe(400);
    const listed = [];
    for await (const x of client.beta.skills.list()) listed.push(x);
    expect(listed).toEqual([]);
    expect(blobCount()).toBe(0);
  });

  it('answers an unknown skill or version 404 naming it', async () => {
    await expect(client.beta.skills.retrieve('skill_01JZZZZZZZZZZZZZZZZZZZZZZZ')).rejects.toThrow(/skill skill_01JZZZZZZZZZZZZZZZZZZZZZZZ not found/);
    const s = await client.beta.skills.create({ files: await dirFiles() });
    await expect(client.beta.skills.versions.retrieve('1234', { skill_id: s.id })).rejects.toThrow(/1234 not found/);
  });
});
