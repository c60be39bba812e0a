/**
 * Library mode, end to end: list, page through and fetch Granola notes with credentials held by
 * this process. Against the sandbox: `npx switchboard sandbox --port 4010`, then
 *   GRANOLA_BASE_URL=http://127.0.0.1:4013 GRANOLA_API_KEY=grn_Uy7nvdpkpdpjAvGFkvDh4HhGbFgn \
 *     node --import tsx examples/library-mode.ts
 * Without GRANOLA_BASE_URL it calls the real Granola API.
 */
import { connect, SwitchboardError } from '@switchboard-oss/switchboard';

const granola = connect('granola', {
  credentials: { api_key: process.env['GRANOLA_API_KEY'] ?? '' },
  ...(process.env['GRANOLA_BASE_URL'] ? { baseUrl: process.env['GRANOLA_BASE_URL'] } : {}),
});

const page = await granola.execute('notes', 'list', { page_size: 5 });
console.log(`first page: ${page.data.length} notes, has_more=${page.meta.has_more}`);

const first = page.data[0];
if (first !== undefined) {
  const note = await granola.execute('notes', 'get', { note_id: first.id, include: 'transcript' });
  console.log(`"${note.data.title}" has ${note.data.transcript?.length ?? 0} transcript segments`);
}

let count = 0;
for await (const _note of granola.records('notes', { page_size: 30 })) count++;
console.log(`all pages: ${count} notes`);

try {
  await granola.search('notes', { query: {} });
} catch (e) {
  if (e instanceof SwitchboardError) console.log(`search: ${e.code}`);
}
