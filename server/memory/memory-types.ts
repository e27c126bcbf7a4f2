import { unreachable } from '~/lib/unreachable';

/** The Managed Agents API's memory shapes (`BetaManagedAgentsMemoryStore`, `…Memory`, `…MemoryVersion`). */

export interface MemoryStore {
  id: string;
  type: 'memory_store';
  name: string;
  description: string;
  metadata: Record<string, string>;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

export interface Memory {
  id: string;
  type: 'memory';
  memory_store_id: string;
  memory_version_id: string;
  path: string;
  content_sha256: string;
  content_size_bytes: number;
  created_at: string;
  updated_at: string;
  /** Present with the `full` view only. */
  content?: string | null;
}

export interface MemoryPrefix {
  type: 'memory_prefix';
  path: string;
}

/** Who made a change: a program's API key, a session (its agent), or the owner in the UI. */
export type Actor = { type: 'api_actor'; api_key_id: string } | { type: 'session_actor'; session_id: string } | { type: 'user_actor'; user_id: string };

export type MemoryOperation = 'created' | 'modified' | 'deleted';

export interface MemoryVersion {
  id: string;
  type: 'memory_version';
  memory_id: string;
  memory_store_id: string;
  operation: MemoryOperation;
  created_at: string;
  created_by: Actor;
  path: string | null;
  content_sha256: string | null;
  content_size_bytes: number | null;
  redacted_at: string | null;
  redacted_by?: Actor;
  /** Present with the `full` view only. */
  content?: string | null;
}

export type MemoryView = 'basic' | 'full';

export function actorId(a: Actor): string {
  switch (a.type) {
    case 'api_actor':
      return a.api_key_id;
    case 'session_actor':
      return a.session_id;
    case 'user_actor':
      return a.user_id;
    default:
      return unreachable(a);
  }
}

export function actorOf(type: Actor['type'], id: string): Actor {
  switch (type) {
    case 'api_actor':
      return { type, api_key_id: id };
    case 'session_actor':
      return { type, session_id: id };
    case 'user_actor':
      return { type, user_id: id };
    default:
      return unreachable(type);
  }
}
