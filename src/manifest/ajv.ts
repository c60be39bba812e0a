/**
 * The project's ajv configuration, shared by the manifest loader, the engine and codegen tests:
 * every error reported (allErrors), draft-07 with the discriminator keyword, and the standard
 * string formats (date, date-time, email, uri...).
 */
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';

/** A new ajv instance; `strict: false` because record schemas carry descriptive extra keywords. */
export function createAjv(options: Options = {}): Ajv {
  const ajv = new Ajv({ allErrors: true, discriminator: true, strict: false, ...options });
  (addFormats as unknown as (a: Ajv) => Ajv)(ajv);
  return ajv;
}
