// The per-task glossary of a translation task (issue 18 item 4): the {"term": "translation"} pairs
// its owner sent, as validated JSON text; null when none was sent.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('glossary', 'text').execute();
}
