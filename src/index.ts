/**
 * Switchboard's public library surface.
 * - `connect()`: library mode, credentials in the caller's process.
 * - `createClient()`: hosted mode, a typed client of the Switchboard service.
 * - `ConnectorRuntime`: the interpreter, for embedding in a host service.
 * - `SwitchboardError` and `ERROR_CODES`: every failure has a stable code.
 */
export { connect, type Connector, type ConnectOptions, type ConnectorType } from './client/library.ts';
export {
  createClient,
  type HostedClient,
  type HostedClientOptions,
  type HostedConnector,
  type HostedProxyRequest,
  type HostedProxyResponse,
  type SearchFilter,
  type SearchParams,
  type SearchResponse,
} from './client/hosted.ts';
export { ConnectorRuntime, type CheckResult, type RuntimeOptions, type Envelope, type ListEnvelope, type RecordEnvelope } from './engine/index.ts';
export type { ProxyRequest, ProxyResponse } from './engine/proxy-exchange.ts';
export { SwitchboardError, ERROR_CODES, isSwitchboardError, type ErrorCode, type ErrorDetail } from './errors/index.ts';
export {
  getConnector,
  connectorRegistry,
  loadManifestFile,
  ManifestError,
  SYNC_ONLY_ACTIONS,
  setConnectorsPath,
  type LoadedManifest,
} from './manifest/index.ts';
export type { ConnectorTypes } from '../generated/index.ts';
export type { FetchLike, RetryPolicy } from './http/index.ts';
