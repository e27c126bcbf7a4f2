import { describe, expect, it } from 'vitest';
import { parseToolInput, toInputSchema } from '~/lib/tool-inputs';
import { BRAIN_TOOLS, HAND_TOOLS } from '~/lib/tools';

describe('tool inputs', () => {
  it("parses the toolset's names and strips unknown keys such as the brain's hand", () => {
    expect(parseToolInput('read', { file_path: 'a', view_range: [2, -1], hand: 'sandbox-1' })).toEqual({ file_path: 'a', view_range: [2, -1] });
    expect(parseToolInput('edit', { file_path: 'a', old_string: 'x', new_string: 'y', replace_all: true })).toEqual({ file_path: 'a', old_string: 'x', new_string: 'y', replace_all: true });
    expect(parseToolInput('glob', { pattern: '*.ts', path: 'src' })).toEqual({ pattern: '*.ts', path: 'src' });
    expect(parseToolInput('bash', { command: 'ls', timeout_ms: 5, restart: true })).toEqual({ command: 'ls', timeout_ms: 5, restart: true });
  });

  it("maps Paddock's old names onto the toolset's, a missing end of the old range meaning to the end", () => {
    expect(parseToolInput('read', { path: 'a', start_line: 2, end_line: 4 })).toEqual({ file_path: 'a', view_range: [2, 4] });
    expect(parseToolInput('read', { path: 'a', start_line: 2 })).toEqual({ file_path: 'a', view_range: [2, -1] });
    expect(parseToolInput('read', { path: 'a', end_line: 3 })).toEqual({ file_path: 'a', view_range: [1, 3] });
    expect(parseToolInput('write', { path: 'a', content: '' })).toEqual({ file_path: 'a', content: '' });
    expect(parseToolInput('edit', { path: 'a', old_text: 'x', new_text: 'y' })).toEqual({ file_path: 'a', old_string: 'x', new_string: 'y' });
    // The new name wins when a call carries both.
    expect(parseToolInput('write', { path: 'old', file_path: 'new', content: '' })).toEqual({ file_path: 'new', content: '' });
  });

  it('names the tool and the field of an invalid input', () => {
    expect(() => parseToolInput('edit', { file_path: 'a' })).toThrow(/^edit: invalid input: old_string: .*new_string: /);
    expect(() => parseToolInput('read', { file_path: 'a', view_range: [1, 2, 3] })).toThrow(/^read: invalid input: view_range/);
    expect(() => parseToolInput('write', 'a')).toThrow(/^write: invalid input: \(root\)/);
  });

  it('gives the model JSON Schemas derived from the same schemas, with the toolset names only', () => {
    for (const name of HAND_TOOLS) {
      const spec = BRAIN_TOOLS.find((t) => t.name === name)!;
      expect(spec.input_schema).toEqual({ ...toInputSchema(name), properties: { ...toInputSchema(name).properties, hand: expect.any(Object) as unknown } });
      const text = JSON.stringify(spec.input_schema);
      for (const old of ['start_line', 'end_line', 'old_text', 'new_text', '$schema', '9007199254740991']) expect(text).not.toContain(old);
    }
    const props = (name: string) => Object.keys(BRAIN_TOOLS.find((t) => t.name === name)!.input_schema.properties);
    expect(props('bash')).toEqual(['command', 'timeout_ms', 'restart', 'hand']);
    expect(props('read')).toEqual(['file_path', 'view_range', 'hand']);
    expect(props('write')).toEqual(['file_path', 'content', 'hand']);
    expect(props('edit')).toEqual(['file_path', 'old_string', 'new_string', 'replace_all', 'hand']);
    expect(props('glob')).toEqual(['pattern', 'path', 'hand']);
    expect(props('grep')).toEqual(['pattern', 'path', 'hand']);
    expect(BRAIN_TOOLS.find((t) => t.name === 'edit')!.input_schema.required).toEqual(['file_path', 'old_string', 'new_string']);
    expect(BRAIN_TOOLS.find((t) => t.name === 'read')!.input_schema.properties.view_range).toMatchObject({ type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 2 });
  });
});
