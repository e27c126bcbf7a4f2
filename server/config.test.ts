import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '~/server/config';

describe('config', () => {
  it('runs the labelled demo brain when no key and no base URL are set', () => {
    const c = loadConfig({});
    expect(c.brain).toBe('demo');
    expect(c.PADDOCK_MODEL).toBe('claude-sonnet-5-5');
    expect(c.PADDOCK_DEFAULT_HAND).toBe('sandbox');
    expect(c.PADDOCK_ALLOW_UNSANDBOXED).toBe(false);
    expect([c.PADDOCK_STORE_RETRY_BASE_MS, c.PADDOCK_STORE_RETRY_MAX_MS]).toEqual([200, 5_000]);
  });

  it('keeps files where the sessions are by default, and refuses an S3 store without a bucket, naming it', () => {
    expect(loadConfig({}).PADDOCK_BLOB_STORE).toBe('auto');
    expect(() => loadConfig({ PADDOCK_BLOB_STORE: 's3' })).toThrow(/PADDOCK_S3_BUCKET.*must be set when PADDOCK_BLOB_STORE=s3/);
    expect(() => loadConfig({ PADDOCK_BLOB_STORE: 'floppy' })).toThrow(/PADDOCK_BLOB_STORE/);
    expect(loadConfig({ PADDOCK_BLOB_STORE: 's3', PADDOCK_S3_BUCKET: 'files', PADDOCK_S3_FORCE_PATH_STYLE: '1' })).toMatchObject({ PADDOCK_S3_BUCKET: 'files', PADDOCK_S3_FORCE_PATH_STYLE: true, PADDOCK_S3_REGION: 'us-east-1' });
  });

  it('runs sandbox hands on the native executor by default, on paddock-hand when asked, and refuses anything else', () => {
    expect(loadConfig({}).PADDOCK_HAND_EXECUTOR).toBe('native');
    expect(loadConfig({ PADDOCK_HAND_EXECUTOR: 'node' }).PADDOCK_HAND_EXECUTOR).toBe('node');
    expect(() => loadConfig({ PADDOCK_HAND_EXECUTOR: 'python' })).toThrow(/PADDOCK_HAND_EXECUTOR/);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ ANTHROPIC_API_KEY: '', ANTHROPIC_BASE_URL: '' }).brain).toBe('demo');
  });

  it('uses Claude with a key, and any Anthropic-compatible server with only a base URL', () => {
    expect(loadConfig({ ANTHROPIC_API_KEY: 'sk-ant-x' }).brain).toBe('anthropic');
    expect(loadConfig({ ANTHROPIC_BASE_URL: 'http://localhost:11434', PADDOCK_MODEL: 'qwen3-coder' })).toMatchObject({ brain: 'anthropic', PADDOCK_MODEL: 'qwen3-coder' });
  });

  it('refuses a bad value with a message naming the variable', () => {
    expect(() => loadConfig({ ANTHROPIC_BASE_URL: 'not a url' })).toThrow(/ANTHROPIC_BASE_URL/);
    expect(() => loadConfig({ PADDOCK_MODEL_RETRIES: '-1' })).toThrow(/PADDOCK_MODEL_RETRIES/);
    expect(() => loadConfig({ PADDOCK_DEFAULT_HAND: 'docker' })).toThrow(/PADDOCK_DEFAULT_HAND/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ PADDOCK_REMOTE_HANDS: '{"gpu": {"url": "nope"}}' })).toThrow(/PADDOCK_REMOTE_HANDS/);
    expect(() => loadConfig({ PADDOCK_STORE_RETRY_BASE_MS: '9000', PADDOCK_STORE_RETRY_MAX_MS: '1000' })).toThrow(/PADDOCK_STORE_RETRY_BASE_MS: must not exceed/);
  });

  it('suspends idle hands after 5 minutes and caps live hands at 16 by default; refuses a cap below 1', () => {
    expect(loadConfig({})).toMatchObject({ PADDOCK_HAND_IDLE_SECONDS: 300, PADDOCK_MAX_LIVE_HANDS: 16 });
    expect(loadConfig({ PADDOCK_HAND_IDLE_SECONDS: '0', PADDOCK_MAX_LIVE_HANDS: '3' })).toMatchObject({ PADDOCK_HAND_IDLE_SECONDS: 0, PADDOCK_MAX_LIVE_HANDS: 3 });
    expect(() => loadConfig({ PADDOCK_MAX_LIVE_HANDS: '0' })).toThrow(/PADDOCK_MAX_LIVE_HANDS/);
    expect(() => loadConfig({ PADDOCK_HAND_IDLE_SECONDS: 'soon' })).toThrow(/PADDOCK_HAND_IDLE_SECONDS/);
  });

  it('refuses unrestricted networking unless PADDOCK_ALLOW_UNRESTRICTED_NETWORK turns it on, and refuses a value that is not a switch', () => {
    expect(loadConfig({}).PADDOCK_ALLOW_UNRESTRICTED_NETWORK).toBe(false);
    expect(loadConfig({ PADDOCK_ALLOW_UNRESTRICTED_NETWORK: '1' }).PADDOCK_ALLOW_UNRESTRICTED_NETWORK).toBe(true);
    expect(loadConfig({ PADDOCK_ALLOW_UNRESTRICTED_NETWORK: 'false' }).PADDOCK_ALLOW_UNRESTRICTED_NETWORK).toBe(false);
    expect(() => loadConfig({ PADDOCK_ALLOW_UNRESTRICTED_NETWORK: 'yes' })).toThrow(/PADDOCK_ALLOW_UNRESTRICTED_NETWORK/);
  });

  it('parses the hand allowlist and remote endpoints', () => {
    const c = loadConfig({ PADDOCK_HAND_ALLOWED_DOMAINS: 'registry.npmjs.org, github.com', PADDOCK_REMOTE_HANDS: '{"gpu":{"url":"http://10.0.0.5:8080/mcp","token":"t"}}' });
    expect(c.PADDOCK_HAND_ALLOWED_DOMAINS).toEqual(['registry.npmjs.org', 'github.com']);
    expect(c.PADDOCK_REMOTE_HANDS).toEqual({ gpu: { url: 'http://10.0.0.5:8080/mcp', token: 't' } });
  });

  it('takes PADDOCK_OUTBOUND_ALLOW as hosts and addresses with optional ports, and refuses anything else naming the variable', () => {
    expect(loadConfig({}).PADDOCK_OUTBOUND_ALLOW).toEqual([]);
    expect(loadConfig({ PADDOCK_OUTBOUND_ALLOW: '127.0.0.1, localhost:8080,[::1]:3000,*.corp.example,::1' }).PADDOCK_OUTBOUND_ALLOW).toEqual(['127.0.0.1', 'localhost:8080', '[::1]:3000', '*.corp.example', '::1']);
    for (const bad of ['*', '10.0.0.0/8', 'http://localhost', 'localhost:0', 'localhost:70000', 'a b', '[::1', 'user@host']) {
      expect(() => loadConfig({ PADDOCK_OUTBOUND_ALLOW: bad }), bad).toThrow(/PADDOCK_OUTBOUND_ALLOW: must be comma-separated hosts or IP addresses/);
    }
  });
});

describe('config errors', () => {
  it('is one line naming the variable and its rule, and never its value', () => {
    expect(() => loadConfig({ PADDOCK_API_KEY: 'short-secret' })).toThrow(new ConfigError(['PADDOCK_API_KEY'], 'invalid setting: PADDOCK_API_KEY: must be at least 16 characters'));
    for (const bad of ['{"box":{"url":"http://h/mcp","token":"tok-SECRET-1234"', '{"box":{"url":"nope","token":"tok-SECRET-1234"}}']) {
      let message = '';
      try {
        loadConfig({ PADDOCK_REMOTE_HANDS: bad });
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message, bad).toMatch(/^invalid setting: PADDOCK_REMOTE_HANDS: must be JSON like/);
      expect(message, bad).not.toContain('SECRET');
      expect(message).not.toContain('\n');
    }
  });
});
