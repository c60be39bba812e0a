/**
 * The Dockerfile and compose.yaml (docs/deploy.md). Statically, on every machine: every file
 * they copy exists (or is one the build stage makes), the command is the package's bin, the
 * image runs as a user other than root with a health check on the service's /healthz and its
 * data directory as a volume, and every setting they pass is one the service reads. The image
 * build itself runs where a Docker engine answers (`docker info`); elsewhere it shows as
 * skipped with that reason.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DATA_DIR_ENV } from '../../src/cli/cli-support.ts';
import { CONFIG_VARIABLES } from '../../src/service/config.ts';
import { buildOpenApiDocument } from '../../src/service/openapi.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const DOCKERFILE = readFileSync(`${ROOT}Dockerfile`, 'utf8');
const COMPOSE = parse(readFileSync(`${ROOT}compose.yaml`, 'utf8')) as {
  services: Record<
    string,
    { build?: string; image?: string; environment?: Record<string, string>; volumes?: string[]; depends_on?: Record<string, unknown>; healthcheck?: unknown }
  >;
  volumes?: Record<string, unknown>;
};
const PKG = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { bin: Record<string, string> };
/** What the build stage makes: not in the repository, made by `npm ci` (which runs `prepare`, the build). */
const BUILT = new Set(['node_modules', 'dist']);
const SETTINGS = new Set(CONFIG_VARIABLES.map((v) => v.name));

/** The instructions of the Dockerfile, continuation lines joined, comments dropped. */
function instructions(): { op: string; args: string }[] {
  return DOCKERFILE.replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [op = '', ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}

/** The stages: each FROM and the instructions after it. */
function stages(): { from: string; body: { op: string; args: string }[] }[] {
  const out: { from: string; body: { op: string; args: string }[] }[] = [];
  for (const i of instructions()) {
    if (i.op === 'FROM') out.push({ from: i.args, body: [] });
    else out.at(-1)?.body.push(i);
  }
  return out;
}

function dockerWorks(): boolean {
  return spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 20_000 }).status === 0;
}

describe('Dockerfile', () => {
  it('is multi-stage: the build stage builds with npm ci and drops the devDependencies', () => {
    const s = stages();
    expect(s.length).toBeGreaterThanOrEqual(2);
    expect(s[0]!.from).toMatch(/^node:(22|24)\S* AS build$/);
    expect(s.at(-1)!.from).toMatch(/^node:(22|24)\S*$/);
    const run = s[0]!.body
      .filter((i) => i.op === 'RUN')
      .map((i) => i.args)
      .join('\n');
    expect(run).toContain('npm ci');
    expect(run).toContain('npm prune --omit=dev');
  });

  it('copies only files that exist in the repository, or that the build stage makes', () => {
    for (const [n, stage] of stages().entries()) {
      for (const { args } of stage.body.filter((i) => i.op === 'COPY')) {
        const fromBuild = /^--from=build\s/.test(args);
        const parts = args.replace(/^--\S+\s+/, '').split(/\s+/);
        for (const source of parts.slice(0, -1)) {
          if (fromBuild) {
            const rel = source.replace(/^\/src\//, '');
            expect(BUILT.has(rel) || existsSync(`${ROOT}${rel}`), `stage ${n}: COPY --from=build ${source}`).toBe(true);
          } else {
            expect(existsSync(`${ROOT}${source}`), `stage ${n}: COPY ${source}`).toBe(true);
          }
        }
      }
    }
    // the build stage has what `npm ci`'s prepare (scripts/build.mjs: tsc -p tsconfig.build.json) reads
    const copied = stages()[0]!
      .body.filter((i) => i.op === 'COPY')
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const needed of ['package-lock.json', 'tsconfig.build.json', 'scripts/build.mjs', 'src', 'generated', 'connectors', 'bin'])
      expect(copied).toContain(needed);
  });

  it('runs the package bin as a user other than root, with its data directory a volume and a health check on /healthz', () => {
    const last = stages().at(-1)!.body;
    const cmd = JSON.parse(last.find((i) => i.op === 'CMD')!.args) as string[];
    expect(cmd).toEqual(['node', PKG.bin['switchboard']!.replace(/^\.\//, ''), 'serve']);
    const user = last.filter((i) => i.op === 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user);
    const env = last
      .filter((i) => i.op === 'ENV')
      .map((i) => i.args)
      .join(' ');
    const dataDir = new RegExp(`${DATA_DIR_ENV}=(\\S+)`).exec(env)?.[1];
    expect(dataDir).toBe('/data');
    expect(JSON.parse(last.find((i) => i.op === 'VOLUME')!.args)).toEqual([dataDir]);
    for (const name of env.match(/[A-Z_]+(?==)/g) ?? []) if (name !== 'NODE_ENV') expect(SETTINGS, name).toContain(name);
    expect(env).toContain('HOST=0.0.0.0'); // reachable from outside the container
    const health = last.find((i) => i.op === 'HEALTHCHECK')!.args;
    expect(health).toContain('/healthz');
    expect(Object.keys((buildOpenApiDocument() as { paths: Record<string, unknown> }).paths)).toContain('/healthz');
  });
});

describe('compose.yaml', () => {
  it('runs the image on PostgreSQL with settings the service reads', () => {
    const { switchboard, postgres } = COMPOSE.services;
    expect(switchboard?.build).toBe('.');
    expect(postgres?.image).toMatch(/^postgres:\d+/);
    expect(postgres?.healthcheck).toBeDefined();
    expect(switchboard?.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    const env = switchboard?.environment ?? {};
    for (const name of Object.keys(env)) expect(SETTINGS, name).toContain(name);
    // the database is the postgres service's, with its user, password and database
    const db = new URL(env['SWITCHBOARD_DATABASE_URL']!);
    const pgEnv = postgres?.environment ?? {};
    expect(db.protocol).toBe('postgres:');
    expect(db.hostname).toBe('postgres');
    expect([db.username, db.password, db.pathname.slice(1)]).toEqual([pgEnv['POSTGRES_USER'], pgEnv['POSTGRES_PASSWORD'], pgEnv['POSTGRES_DB']]);
    // PostgreSQL requires an encryption key: compose refuses to start without one rather than inventing it
    expect(env['SWITCHBOARD_ENCRYPTION_KEY']).toMatch(/^\$\{SWITCHBOARD_ENCRYPTION_KEY:\?/);
    for (const v of [...(switchboard?.volumes ?? []), ...(postgres?.volumes ?? [])]) expect(Object.keys(COMPOSE.volumes ?? {})).toContain(v.split(':')[0]);
    expect(switchboard?.volumes).toContain('switchboard-data:/data');
  });
});

const docker = dockerWorks();
describe.skipIf(!docker)(`docker build${docker ? '' : ' (skipped: no Docker engine answers `docker info` on this machine)'}`, () => {
  it(
    'builds the image',
    () => {
      const tag = `switchboard-test:${process.pid}`;
      try {
        execFileSync('docker', ['build', '-t', tag, ROOT], { stdio: 'inherit', timeout: 20 * 60_000 });
        const user = execFileSync('docker', ['image', 'inspect', '-f', '{{.Config.User}}', tag], { encoding: 'utf8' }).trim();
        expect(user).toBe('node');
      } finally {
        spawnSync('docker', ['image', 'rm', '-f', tag], { stdio: 'ignore' });
      }
    },
    20 * 60_000,
  );
});
