import { DANGEROUS_FILES, getDangerousDirectories } from '@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-utils.js';
import { describe, expect, it } from 'vitest';
import { isSandboxMask, SANDBOX_MASKED_DIRS, SANDBOX_MASKED_FILES } from '~/lib/sandbox-masks';

describe('isSandboxMask', () => {
  it('hides an empty masked file at the workspace top level', () => {
    expect(isSandboxMask('.bashrc', { kind: 'file', size: 0 })).toBe(true);
    expect(isSandboxMask('.mcp.json', { kind: 'file', size: 0 })).toBe(true);
  });

  it('hides an empty masked folder at the top level', () => {
    expect(isSandboxMask('.vscode', { kind: 'directory', entries: 0 })).toBe(true);
    expect(isSandboxMask('.claude', { kind: 'directory', entries: 0 })).toBe(true);
  });

  it('keeps a masked name the agent wrote content into', () => {
    expect(isSandboxMask('.gitconfig', { kind: 'file', size: 42 })).toBe(false);
    expect(isSandboxMask('.vscode', { kind: 'directory', entries: 1 })).toBe(false);
  });

  it('keeps a masked name below the top level', () => {
    expect(isSandboxMask('app/.bashrc', { kind: 'file', size: 0 })).toBe(false);
  });

  it('keeps other empty dotfiles', () => {
    expect(isSandboxMask('.env', { kind: 'file', size: 0 })).toBe(false);
    expect(isSandboxMask('.gitignore', { kind: 'file', size: 0 })).toBe(false);
  });

  it("covers exactly the names the installed sandbox runtime masks in the workspace", () => {
    expect([...SANDBOX_MASKED_FILES].sort()).toEqual([...DANGEROUS_FILES].sort());
    const tops = [...new Set(getDangerousDirectories().map((d) => d.split('/')[0]!))].sort();
    expect([...SANDBOX_MASKED_DIRS].sort()).toEqual(tops);
  });
});
