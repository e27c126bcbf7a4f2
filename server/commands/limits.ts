import 'server-only';
import { TooLargeError } from '~/lib/errors';
import type { Config } from '~/server/config';

type Limits = Pick<Config, 'PADDOCK_MAX_MESSAGE_CHARS' | 'PADDOCK_MAX_EVENT_BYTES' | 'PADDOCK_MAX_FILE_WRITE_BYTES'>;

/**
 * The configured caps on what a caller may store, checked before anything is written. Each
 * refusal names the limit and the setting that raises it.
 */
export function checkEventSize(limits: Limits, event: { type: string; content?: unknown }): void {
  if (event.type === 'user.message' && Array.isArray(event.content)) {
    const chars = event.content.reduce<number>((n, c: { type?: string; text?: string }) => n + (c.type === 'text' && typeof c.text === 'string' ? c.text.length : 0), 0);
    if (chars > limits.PADDOCK_MAX_MESSAGE_CHARS) {
      throw new TooLargeError(`message text is ${chars} characters, over the limit of ${limits.PADDOCK_MAX_MESSAGE_CHARS} (PADDOCK_MAX_MESSAGE_CHARS)`);
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(event), 'utf8');
  if (bytes > limits.PADDOCK_MAX_EVENT_BYTES) {
    throw new TooLargeError(`event is ${bytes} bytes, over the limit of ${limits.PADDOCK_MAX_EVENT_BYTES} (PADDOCK_MAX_EVENT_BYTES)`);
  }
}

export function checkFileWrite(limits: Limits, content: string): void {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > limits.PADDOCK_MAX_FILE_WRITE_BYTES) {
    throw new TooLargeError(`file content is ${bytes} bytes, over the limit of ${limits.PADDOCK_MAX_FILE_WRITE_BYTES} (PADDOCK_MAX_FILE_WRITE_BYTES)`);
  }
}
