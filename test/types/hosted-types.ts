/**
 * Compile-time tests of the hosted SDK's typing (checked by `tsc --noEmit`, never run): the same
 * per-connector types as library mode, and search typed by the entity's search fields.
 */
import { createClient } from '../../src/index.ts';

export async function hostedTypeChecks(): Promise<void> {
  const client = createClient({ baseUrl: 'http://127.0.0.1:3000', customerName: 'acme', clientId: 'id', clientSecret: 'secret' });
  const intercom = client.connector('intercom');
  const contact = await intercom.execute('contacts', 'get', { id: '1' });
  const email: string | null | undefined = contact.data.email;
  const page = await intercom.execute('contacts', 'list', { per_page: 50 });
  const next: string | null = page.meta.next_page;
  const found = await intercom.search('contacts', {
    query: { filter: { and: [{ eq: { role: 'user' } }, { gte: { created_at: 1700000000 } }, { keyword: { name: 'grace' } }] }, sort: [{ created_at: 'desc' }] },
    fields: ['id', 'email', 'custom_attributes.plan'],
    limit: 100,
  });
  const hasMore: boolean = found.meta.has_more;
  void [email, next, hasMore];

  // @ts-expect-error wrong param name for contacts.get
  await intercom.execute('contacts', 'get', { contact_id: '1' });
  // @ts-expect-error wrong param type for contacts.get
  await intercom.execute('contacts', 'get', { id: 1 });
  // @ts-expect-error conversations has no create
  await intercom.execute('conversations', 'create', {});
  // @ts-expect-error unknown search field
  await intercom.search('contacts', { query: { filter: { eq: { colour: 'red' } } } });
  // @ts-expect-error wrong value type for a search field
  await intercom.search('contacts', { query: { filter: { gt: { created_at: 'yesterday' } } } });
  // @ts-expect-error admins are not searchable
  await intercom.search('admins', { query: {} });
  // @ts-expect-error credentials of no Granola variant
  await client.connectors.create({ connector_type: 'granola', name: 'x', credentials: { token: 'x' } });
}
