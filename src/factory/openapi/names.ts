/** Name helpers the scaffold's readers share: a name compared loosely, and an entity's singular. */

/** Lower case, letters and digits only: `Invoice_ID` and `invoiceId` compare equal. */
export const norm = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/** A plural entity name's singular (`companies` → `company`, `tasks` → `task`). */
export const singular = (name: string): string => name.replace(/ies$/, 'y').replace(/s$/, '');
