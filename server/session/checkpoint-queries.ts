import 'server-only';
import type { Kysely } from 'kysely';
import type { Database } from '~/server/session/schema';
import { nonNegativeInt } from '~/server/session/session-rows';
import type { Checkpoint, Checkpoints } from '~/server/session/store';

/** The harness's stored folds of a log: one per session, only ever replaced by a later one. */
export class CheckpointQueries implements Checkpoints {
  constructor(private readonly db: Kysely<Database>) {}

  async readCheckpoint(id: string): Promise<Checkpoint | null> {
    const row = await this.db.selectFrom('session_checkpoints').select(['seq', 'body']).where('session_id', '=', id).executeTakeFirst();
    return row ? { seq: Number(row.seq), body: row.body } : null;
  }

  async writeCheckpoint(id: string, checkpoint: Checkpoint): Promise<void> {
    const seq = nonNegativeInt('seq', checkpoint.seq);
    await this.db
      .insertInto('session_checkpoints')
      .columns(['session_id', 'seq', 'body'])
      // Only for a session that exists: a harness finishing after a delete leaves nothing behind.
      .expression((eb) => eb.selectFrom('sessions').select([eb.val(id).as('session_id'), eb.val(seq).as('seq'), eb.val(checkpoint.body).as('body')]).where('id', '=', id))
      .onConflict((oc) => oc.column('session_id').doUpdateSet((eb) => ({ seq: eb.ref('excluded.seq'), body: eb.ref('excluded.body') })).where('session_checkpoints.seq', '<', (eb) => eb.ref('excluded.seq')))
      .execute();
  }
}
