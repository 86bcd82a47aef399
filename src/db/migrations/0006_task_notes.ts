// Notes on a finished task: sentences for its owner about what the result lacks and why ("Page 3
// has no text layer and no OCR engine is installed …"), issue 17 item 4. A JSON array of strings.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('notes', 'text').execute();
}
