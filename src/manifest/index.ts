export { loadManifestFile, loadManifestText, formatProblem, ManifestError, type ManifestProblem } from './load.ts';
export { connectorRegistry, getConnector, manifestFiles, connectorsPath, setConnectorsPath, CONNECTORS_DIR, CONNECTORS_PATH_ENV } from './registry.ts';
export { paramsSchema, credentialsSchema, listMetaSchema, recordSchema, searchRecordSchema, type JsonSchema } from './schemas.ts';
export { createAjv } from './ajv.ts';
export { kindIndex, type KindIndex } from './kinds.ts';
export { MANIFEST_SCHEMA } from './manifest-schema.ts';
export {
  ACTION_NAMES,
  LIST_ACTIONS,
  SYNC_ONLY_ACTIONS,
  renderTree,
  type ActionName,
  type CompiledAction,
  type CompiledAuthVariant,
  type CompiledFollowUp,
  type CompiledMint,
  type CompiledCheck,
  type CompiledEntity,
  type LoadedManifest,
} from './compile.ts';
export type * from '../../generated/manifest.ts';
