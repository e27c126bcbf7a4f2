import { z } from 'zod';

/**
 * The file tools' inputs as zod schemas, for hands that check them themselves (the in-process
 * memory hand, the server-filesystem adapter). Unknown keys, such as the brain's `hand`, are
 * stripped. `BRAIN_TOOLS` (lib/tools.ts) is the JSON-schema view the model sees.
 */
const Path = z.string().min(1).max(4096);

export const FileToolInputs = {
  read: z.object({ path: Path, start_line: z.number().int().positive().optional(), end_line: z.number().int().positive().optional() }),
  write: z.object({ path: Path, content: z.string() }),
  edit: z.object({ path: Path, old_text: z.string().min(1), new_text: z.string() }),
  glob: z.object({ pattern: z.string().min(1) }),
  grep: z.object({ pattern: z.string().min(1), path: z.string().optional() }),
};
