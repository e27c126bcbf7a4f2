import 'server-only';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import busboy from 'busboy';
import { z } from 'zod';
import { InvalidInputError } from '~/lib/errors';
import { ID_PATTERN } from '~/lib/ids';
import { deleteFile, downloadFile, getFile, listFiles, uploadFile } from '~/server/commands/file-commands';
import { fileResponse } from '~/server/files/file-response';
import { CommonQuery, Limit, List, Page, parseInput, queryObject } from '~/server/rest/query';
import type { RestRequest, Route } from '~/server/rest/route-table';

const FileId = z.string().regex(ID_PATTERN.file, 'must be a file id (file_…)');
const ListQuery = z
  .object({
    limit: Limit(1000, 20),
    page: Page,
    ids: List(FileId),
    scope_id: z.string().regex(ID_PATTERN.session, 'must be a session id (sesn_…)').optional(),
    ...CommonQuery,
  })
  .strict();

function fileId(params: Record<string, string>): string {
  const r = FileId.safeParse(params.id);
  if (!r.success) throw new InvalidInputError(`file_id: ${params.id ?? ''} must be a file id (file_…)`);
  return r.data;
}

/**
 * `POST /v1/files`: a multipart form with one `file` part (and `expires_in_seconds`), streamed
 * through busboy to the blob store: never held whole in memory, cut off at the upload cap.
 */
async function upload({ rt, headers, stream, maxUploadBytes }: RestRequest) {
  const type = headers.get('content-type') ?? '';
  if (!stream || !/^multipart\/form-data\b/i.test(type)) throw new InvalidInputError('body: must be multipart/form-data with a `file` part');
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: { 'content-type': type }, limits: { files: 1, fields: 10, fieldSize: 1024, parts: 12 } });
  } catch (e) {
    throw new InvalidInputError(`body: ${e instanceof Error ? e.message : 'not a multipart form'}`);
  }
  const fields: Record<string, string> = {};
  const parsed = new Promise<void>((resolve, reject) => {
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('close', () => resolve());
    parser.on('error', (e: unknown) => reject(new InvalidInputError(`body: ${e instanceof Error ? e.message : 'not a multipart form'}`)));
    parser.on('filesLimit', () => reject(new InvalidInputError('body: one `file` part only')));
  });
  const file = new Promise<{ source: Readable; filename: string; mimeType: string }>((resolve, reject) => {
    parser.on('file', (name, source, info) => {
      if (name !== 'file') {
        source.resume();
        return reject(new InvalidInputError(`body: unknown part ${JSON.stringify(name)}; the file goes in \`file\``));
      }
      resolve({ source, filename: info.filename ?? 'upload', mimeType: info.mimeType || 'application/octet-stream' });
    });
    void parsed.then(() => reject(new InvalidInputError('body: no `file` part')), reject);
  });
  Readable.fromWeb(stream as NodeReadableStream<Uint8Array>).on('error', (e) => parser.destroy(e)).pipe(parser);
  const f = await file;
  const expiresIn = parsed.then(() => {
    const raw = fields.expires_in_seconds;
    if (raw === undefined || raw === '') return {};
    if (!/^\d{1,10}$/.test(raw)) throw new InvalidInputError('expires_in_seconds: must be a whole number of seconds');
    return { expiresInSeconds: Number(raw) };
  });
  // Awaited by uploadFile after the bytes are in; an upload refused before then must not leave it unhandled.
  expiresIn.catch(() => undefined);
  return uploadFile({ files: rt.files, blobs: rt.blobs }, { filename: f.filename, mimeType: f.mimeType, source: f.source, maxBytes: maxUploadBytes, fields: expiresIn });
}

async function list({ rt, query }: RestRequest) {
  const q = parseInput(ListQuery, queryObject(query), 'query');
  return listFiles({ files: rt.files, blobs: rt.blobs }, { limit: q.limit, page: q.page, ids: q.ids, scopeId: q.scope_id });
}

async function retrieve({ rt, params }: RestRequest) {
  return getFile({ files: rt.files, blobs: rt.blobs }, fileId(params));
}

/** The bytes, streamed, with their type and length; the name in Content-Disposition. */
async function content({ rt, params }: RestRequest) {
  return fileResponse(await downloadFile({ files: rt.files, blobs: rt.blobs }, fileId(params)));
}

async function remove({ rt, params }: RestRequest) {
  return deleteFile({ files: rt.files, blobs: rt.blobs }, fileId(params));
}

/** /v1/files (the beta Files API; `client.files` reaches the same paths). */
export const fileRoutes: Route[] = [
  { method: 'POST', path: 'files', handler: upload, upload: true },
  { method: 'GET', path: 'files', handler: list },
  { method: 'GET', path: 'files/:id', handler: retrieve },
  { method: 'GET', path: 'files/:id/content', handler: content },
  { method: 'DELETE', path: 'files/:id', handler: remove },
];
