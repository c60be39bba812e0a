/**
 * The local MCP backend: connector instances from a YAML file, run in library mode in this
 * process. Credential values come from environment variables (`${NAME}`), so the file itself
 * holds no secret; a missing variable is reported at start, naming the instance and the variable.
 *
 *   connectors:
 *     - id: granola                 # what tools call this instance
 *       type: granola
 *       description: Our team's meeting notes   # optional
 *       base_url: http://127.0.0.1:4010         # optional
 *       credentials:
 *         api_key: ${GRANOLA_API_KEY}
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { Credentials } from '../auth/index.ts';
import type { ConnectorRuntime } from '../engine/index.ts';
import { isSwitchboardError, SwitchboardError, type ErrorDetail } from '../errors/index.ts';
import { getConnector } from '../manifest/index.ts';
import { executeFailure, secretValues } from '../engine/secret-scrub.ts';
import type { McpBackend, McpInstance } from './types.ts';

/** One entry of the connectors file, after environment substitution. */
export interface InstanceSpec {
  id: string;
  type: string;
  description?: string;
  base_url?: string;
  credentials: Record<string, unknown>;
}

/** Instance ids: short, and valid inside MCP tool names (`<id>_<entity>_<action>`). */
const ID = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/;
const KEYS = new Set(['id', 'type', 'description', 'base_url', 'credentials']);
const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

function fail(file: string, message: string, errors: ErrorDetail[] = []): never {
  throw new SwitchboardError('invalid_connectors_file', `${file}: ${message}`, { errors, details: { file } });
}

/** `${NAME}` in every string replaced from `env`; each missing variable noted with where it is used. */
function substitute(value: unknown, env: NodeJS.ProcessEnv, path: string, missing: { path: string; variable: string }[]): unknown {
  if (typeof value === 'string') {
    return value.replace(VARIABLE, (_m, name: string) => {
      const v = env[name];
      if (v === undefined || v === '') {
        missing.push({ path, variable: name });
        return '';
      }
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substitute(v, env, `${path}/${i}`, missing));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, env, `${path}/${k}`, missing)]));
  return value;
}

/** Parse and check a connectors file: shape, unique ids, known types, every variable set. */
export function parseConnectorsFile(text: string, file: string, env: NodeJS.ProcessEnv = process.env): InstanceSpec[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    fail(file, `is not valid YAML (${(e as Error).message.split('\n')[0] ?? ''})`);
  }
  const list = (doc as { connectors?: unknown } | null)?.connectors;
  if (!Array.isArray(list) || list.length === 0)
    fail(file, 'must have a non-empty `connectors:` list', [{ path: '/connectors', message: 'must be a non-empty list' }]);
  const seen = new Set<string>();
  const specs: InstanceSpec[] = [];
  const missing: { path: string; variable: string; id: string }[] = [];
  list.forEach((raw: unknown, i) => {
    const at = `/connectors/${i}`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      fail(file, `connectors[${i}] must be a mapping`, [{ path: at, message: 'must be a mapping' }]);
    const entry = raw as Record<string, unknown>;
    const unknown = Object.keys(entry).filter((k) => !KEYS.has(k));
    if (unknown.length > 0)
      fail(
        file,
        `connectors[${i}] has unknown keys ${unknown.join(', ')}; keys: ${[...KEYS].join(', ')}`,
        unknown.map((k) => ({ path: `${at}/${k}`, message: 'is not a known key' })),
      );
    const id = entry['id'];
    if (typeof id !== 'string' || !ID.test(id))
      fail(file, `connectors[${i}].id must be a name of letters, digits, _ and - (at most 32, starting with a letter)`, [
        { path: `${at}/id`, message: 'is missing or not a valid name' },
      ]);
    if (seen.has(id)) fail(file, `the id "${id}" is used twice`, [{ path: `${at}/id`, message: 'is not unique' }]);
    seen.add(id);
    if (typeof entry['type'] !== 'string') fail(file, `connector ${id}: type is required (e.g. granola)`, [{ path: `${at}/type`, message: 'is required' }]);
    for (const k of ['description', 'base_url'] as const) {
      if (entry[k] !== undefined && typeof entry[k] !== 'string')
        fail(file, `connector ${id}: ${k} must be a string`, [{ path: `${at}/${k}`, message: 'must be a string' }]);
    }
    const credentials = entry['credentials'];
    if (credentials === null || typeof credentials !== 'object' || Array.isArray(credentials)) {
      fail(file, `connector ${id}: credentials must be a mapping of the connector type's credential fields`, [
        { path: `${at}/credentials`, message: 'must be a mapping' },
      ]);
    }
    const found: { path: string; variable: string }[] = [];
    const resolved = substitute(entry, env, at, found) as Record<string, unknown>;
    missing.push(...found.map((m) => ({ ...m, id })));
    specs.push({
      id,
      type: entry['type'],
      credentials: resolved['credentials'] as Record<string, unknown>,
      ...(typeof resolved['description'] === 'string' ? { description: resolved['description'] } : {}),
      ...(typeof resolved['base_url'] === 'string' && resolved['base_url'] !== '' ? { base_url: resolved['base_url'] } : {}),
    });
  });
  if (missing.length > 0) {
    fail(
      file,
      `environment variables not set: ${missing.map((m) => `${m.variable} (connector ${m.id})`).join(', ')}`,
      missing.map((m) => ({ path: m.path, message: `environment variable ${m.variable} is not set (connector ${m.id})` })),
    );
  }
  return specs;
}

interface LocalInstance extends McpInstance {
  runtime: ConnectorRuntime;
  secrets: string[];
}

/** Build the runtimes of a connectors file (library mode); errors name the instance. */
export async function localBackend(file: string, env: NodeJS.ProcessEnv = process.env): Promise<McpBackend & { list: McpInstance[] }> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new SwitchboardError('invalid_connectors_file', `Cannot read the connectors file ${file}: ${(e as Error).message}`, { details: { file } });
  }
  const specs = parseConnectorsFile(text, file, env);
  const { libraryRuntime } = await import('../client/library-runtime.ts');
  const instances = new Map<string, LocalInstance>();
  for (const spec of specs) {
    try {
      const manifest = getConnector(spec.type);
      const runtime = await libraryRuntime(spec.type, spec.credentials, { baseUrl: spec.base_url, other: `set base_url of ${spec.id} in ${file}` });
      instances.set(spec.id, {
        id: spec.id,
        type: spec.type,
        manifest,
        runtime,
        secrets: secretValues(manifest, runtime.authVariant, spec.credentials as Credentials),
        ...(spec.description !== undefined ? { description: spec.description } : {}),
      });
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      // Never echo credential values: only the code, the message and the failing paths.
      const secrets = Object.values(spec.credentials).filter((v): v is string => typeof v === 'string');
      const clean = executeFailure(e, secrets);
      throw new SwitchboardError(clean.code, `connector ${spec.id} (${file}): ${clean.message}`, { errors: clean.errors, details: { connector: spec.id } });
    }
  }
  const list = [...instances.values()];
  const find = (id: string): LocalInstance => {
    const found = instances.get(id);
    if (found === undefined) {
      throw new SwitchboardError('connector_not_found', `No connector "${id}" in ${file}; connectors: ${[...instances.keys()].join(', ')}`, {
        errors: [{ path: '/connector', message: `must be one of: ${[...instances.keys()].join(', ')}` }],
        details: { connector: id, valid: [...instances.keys()] },
      });
    }
    return found;
  };
  return {
    mode: 'local',
    list,
    instances: async () => list,
    instance: async (id) => find(id),
    execute: async (instance, entity, action, params, signal) => {
      const local = find(instance.id);
      try {
        return await local.runtime.execute(entity, action, params, { signal });
      } catch (e) {
        throw isSwitchboardError(e) ? executeFailure(e, local.secrets) : e;
      }
    },
    proxy: async (instance, request, signal) => {
      const local = find(instance.id);
      try {
        return await local.runtime.proxy(request, { signal });
      } catch (e) {
        throw isSwitchboardError(e) ? executeFailure(e, local.secrets) : e;
      }
    },
    search: async (instance, entity) => {
      // Same answer as library mode's search(): unknown_entity first, then search_hosted_only.
      find(instance.id).runtime.action(entity, 'search');
      throw new SwitchboardError('search_hosted_only');
    },
  };
}
