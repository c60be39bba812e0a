/**
 * The semantic checks JSON Schema cannot express, one file per manifest section, run in the
 * order a manifest reads: connector settings, auth, base URLs and config, errors, entities (with
 * their actions, pagination, sync and search), credential checks, webhooks, vendor description.
 * Every problem goes to the checker; the compiled manifest is returned whatever was found (the
 * loader throws when the checker holds problems).
 */
import type { Manifest } from '../../../generated/manifest.ts';
import type { LoadedManifest } from '../compile.ts';
import { checkAuth, checkCredentialChecks } from './auth.ts';
import { checkBaseUrls, checkConfig } from './base-urls.ts';
import type { CheckContext, Checker } from './checker.ts';
import { checkAliases, checkHeaders } from './connector.ts';
import { checkEntities } from './entities.ts';
import { checkErrors } from './errors.ts';
import { checkRateLimit } from './rate-limit.ts';
import { checkVendorDescription } from './vendor-description.ts';
import { checkWebhooks } from './webhooks.ts';

export { Checker, type ManifestProblem } from './checker.ts';
export { ajv } from './json-schema.ts';

export function semanticCheck(m: Manifest, file: string, check: Checker): LoadedManifest {
  const ctx: CheckContext = {
    m,
    file,
    check,
    config: new Set(Object.keys(m.config ?? {})),
    credentialFields: new Set(m.auth.flatMap((v) => Object.keys(v.fields))),
  };
  checkAliases(ctx);
  const rateKey = checkRateLimit(ctx);
  const headers = checkHeaders(ctx);
  const auth = checkAuth(ctx);
  const baseUrls = checkBaseUrls(ctx);
  checkConfig(ctx);
  const { errorMessage, bodyErrors, statusErrors, errorList } = checkErrors(ctx);
  const entities = checkEntities(ctx);
  const credentialCheck = checkCredentialChecks(ctx, auth);
  const webhooks = checkWebhooks(ctx, entities);
  const vendorDescription = m.vendor_description !== undefined ? checkVendorDescription(ctx, m.vendor_description) : undefined;

  return {
    file,
    manifest: m,
    type: m.type,
    headers,
    auth,
    entities,
    ...(errorMessage ? { errorMessage } : {}),
    bodyErrors,
    statusErrors,
    baseUrls,
    ...(errorList ? { errorList } : {}),
    ...(credentialCheck ? { check: credentialCheck } : {}),
    ...(webhooks !== undefined ? { webhooks } : {}),
    ...(vendorDescription ? { vendorDescription } : {}),
    ...(rateKey !== undefined ? { rateKey } : {}),
  };
}
