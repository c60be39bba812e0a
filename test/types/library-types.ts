/**
 * Compile-time tests of library mode typing (checked by `tsc --noEmit` in CI, never run):
 * a wrong entity, action, param name or param type must not compile.
 */
import { connect } from '../../src/index.ts';

export async function typeChecks(): Promise<void> {
  const granola = connect('granola', { credentials: { api_key: 'grn_x' } });
  const page = await granola.execute('notes', 'list', { page_size: 10 });
  const cursor: string | null = page.meta.cursor;
  const hasMore: boolean = page.meta.has_more;
  const note = await granola.execute('notes', 'get', { note_id: 'not_10000000000000', include: 'transcript' });
  const title: string | null | undefined = note.data.title;
  for await (const n of granola.records('notes', { page_size: 30 })) void n.id;
  void [cursor, hasMore, title];

  // @ts-expect-error unknown entity
  await granola.execute('contacts', 'list', {});
  // @ts-expect-error unknown action
  await granola.execute('notes', 'create', {});
  // @ts-expect-error wrong param name
  await granola.execute('notes', 'get', { id: 'not_10000000000000' });
  // @ts-expect-error wrong param type
  await granola.execute('notes', 'list', { page_size: '10' });
  // @ts-expect-error value outside the enum
  await granola.execute('notes', 'get', { note_id: 'x', include: 'attachments' });
  // @ts-expect-error credentials of no variant
  connect('granola', { credentials: { token: 'x' } });
}
