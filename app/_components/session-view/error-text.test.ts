import { describe, expect, it } from 'vitest';
import { SessionErrorObject } from '~/lib/events';
import { errorText } from '~/app/_components/session-view/error-text';

const err = (type: SessionErrorObject['type'], message: string, retry: 'retrying' | 'exhausted' | 'terminal' = 'exhausted') => ({ type, message, retry_status: { type: retry } });

describe('session errors as people read them', () => {
  it('has a plain sentence for every error type, never the raw type name', () => {
    for (const type of SessionErrorObject.shape.type.options) {
      const text = errorText(err(type, 'x'));
      expect(text.sentence.length, type).toBeGreaterThan(10);
      expect(text.sentence).not.toContain('_error');
      expect(text.hint.length, type).toBeGreaterThan(10);
    }
  });

  it('says an unreachable model server is a connection problem, and a refused key a key problem', () => {
    expect(errorText(err('model_request_failed_error', 'model stream failed: Connection error. (exhausted)')).sentence).toMatch(/could not reach the model/);
    expect(errorText(err('model_request_failed_error', '401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}')).sentence).toMatch(/refused the API key/);
  });

  it('offers Retry only once Paddock stopped retrying by itself', () => {
    expect(errorText(err('model_overloaded_error', 'overloaded', 'retrying'))).toMatchObject({ retry: false, hint: expect.stringContaining('by itself') as unknown });
    expect(errorText(err('model_overloaded_error', 'overloaded', 'exhausted'))).toMatchObject({ retry: true, hint: expect.stringContaining('Retry') as unknown });
  });
});
