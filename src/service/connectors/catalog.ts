/**
 * The connector-types catalog: what a caller needs to create connectors and call execute,
 * derived from the manifests (the same schemas the engine validates with). Credential variants
 * list field names, types and which are secret — never values.
 */
import { credentialsSchema, listMetaSchema, paramsSchema, recordSchema, SYNC_ONLY_ACTIONS, type LoadedManifest } from '../../manifest/index.ts';
import type { ConnectorTypeConfig } from '../config.ts';
import { SearchParamsSchema, type Schema } from '../http/schemas.ts';

export interface CatalogEntry {
  type: string;
  title: string;
  kind: string;
  description?: string;
  docs_url?: string;
  credential_variants: {
    name: string;
    type: string;
    title?: string;
    description?: string;
    fields: { name: string; type: string; required: boolean; secret: boolean; multiline?: true; description?: string }[];
    schema: Schema;
  }[];
  oauth: { variant: string; configured: boolean } | null;
  list_meta_schema: Schema;
  entities: {
    name: string;
    title?: string;
    description?: string;
    primary_key: string;
    record_schema: Schema;
    search_fields?: Record<string, string>;
    actions: { name: string; description?: string; params_schema: Schema }[];
  }[];
}

/** The catalog entry of one connector type. */
export function catalogEntry(m: LoadedManifest, cfg: ConnectorTypeConfig | undefined): CatalogEntry {
  const man = m.manifest;
  const oauthVariant = man.auth.find((v) => v.type === 'oauth2');
  return {
    type: m.type,
    title: man.title,
    kind: man.kind,
    ...(man.description !== undefined ? { description: man.description } : {}),
    ...(man.docs_url !== undefined ? { docs_url: man.docs_url } : {}),
    credential_variants: man.auth.map((v) => ({
      name: v.name,
      type: v.type,
      ...(v.title !== undefined ? { title: v.title } : {}),
      ...(v.description !== undefined ? { description: v.description } : {}),
      fields: Object.entries(v.fields).flatMap(([name, f]) =>
        f === undefined
          ? []
          : [
              {
                name,
                type: f.type,
                required: f.required !== false,
                secret: f.secret === true,
                ...(f.multiline === true ? { multiline: true as const } : {}),
                ...(f.description !== undefined ? { description: f.description } : {}),
              },
            ],
      ),
      schema: credentialsSchema(v),
    })),
    oauth: oauthVariant === undefined ? null : { variant: oauthVariant.name, configured: cfg?.oauth !== undefined },
    list_meta_schema: listMetaSchema(man),
    entities: [...m.entities.values()].map((e) => ({
      name: e.name,
      ...(e.def.title !== undefined ? { title: e.def.title } : {}),
      ...(e.def.description !== undefined ? { description: e.def.description } : {}),
      primary_key: e.def.primary_key,
      record_schema: recordSchema(e.def),
      ...(e.def.search !== undefined ? { search_fields: Object.fromEntries(Object.entries(e.def.search.fields).map(([k, t]) => [k, String(t)])) } : {}),
      actions: [
        ...[...e.actions.values()]
          .filter((a) => !SYNC_ONLY_ACTIONS.has(a.name))
          .map((a) => ({
            name: a.name,
            ...(a.def.description !== undefined ? { description: a.def.description } : {}),
            params_schema: paramsSchema(a.def),
          })),
        ...(e.def.search !== undefined
          ? [{ name: 'search', description: 'Query the data the service has synced (hosted mode only)', params_schema: SearchParamsSchema }]
          : []),
      ],
    })),
  };
}

/** The catalog of every registered type, sorted by type. */
export function buildCatalog(registry: Map<string, LoadedManifest>, types: Record<string, ConnectorTypeConfig>): CatalogEntry[] {
  return [...registry.values()].sort((a, b) => a.type.localeCompare(b.type)).map((m) => catalogEntry(m, types[m.type]));
}
