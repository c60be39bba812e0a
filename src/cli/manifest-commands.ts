/** `switchboard validate`, `switchboard codegen [--check]`, `switchboard connectors`. */
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import type { LoadedManifest } from '../manifest/index.ts';
import { plural, CONNECTORS_OPTION, collect } from './cli-support.ts';

// The manifest loader (ajv, handlebars, yaml) and codegen are loaded by the commands that use
// them, not by `switchboard --help`.
const manifests = (): Promise<typeof import('../manifest/index.ts')> => import('../manifest/index.ts');

/**
 * Load every file, printing each problem; returns the manifests that loaded. `onLoaded` hears of
 * each as it loads, and the event loop turns after each (so that a worker's answers are read).
 */
async function loadAll(
  files: string[],
  onLoaded?: (loaded: { manifest: LoadedManifest; source: string }) => void,
): Promise<{ ok: { manifest: LoadedManifest; source: string }[]; failed: number; root: string }> {
  const { CONNECTORS_DIR, formatProblem, loadManifestFile, ManifestError } = await manifests();
  const ROOT = resolve(CONNECTORS_DIR, '..');
  const ok: { manifest: LoadedManifest; source: string }[] = [];
  let failed = 0;
  for (const f of files) {
    const shown = relative(process.cwd(), f) || f;
    try {
      // Built-in manifests are named from the package root; others (--connectors) as given.
      const inPackage = !relative(ROOT, f).startsWith('..');
      const loaded = { manifest: loadManifestFile(shown), source: inPackage ? relative(ROOT, f) : shown.startsWith('..') ? f : shown };
      ok.push(loaded);
      if (onLoaded !== undefined) {
        onLoaded(loaded);
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (e) {
      failed++;
      if (e instanceof ManifestError) for (const p of e.problems) process.stderr.write(`${formatProblem(p)}\n`);
      else process.stderr.write(`${shown}: ${(e as Error).message}\n`);
    }
  }
  return { ok, failed, root: ROOT };
}

export function registerManifestCommands(program: Command): void {
  program
    .command('validate')
    .description('Validate connector manifests (default: every connectors/*/connector.yaml)')
    .option(...CONNECTORS_OPTION, collect)
    .argument('[files...]', 'manifest files')
    .action(async (files: string[]) => {
      const targets = files.length > 0 ? files.map((f) => resolve(f)) : (await manifests()).manifestFiles();
      const { ok, failed } = await loadAll(targets);
      for (const m of ok) process.stdout.write(`ok ${m.source} (${m.manifest.type}: ${plural(m.manifest.entities.size, 'entity', 'entities')})\n`);
      if (failed > 0) {
        process.stderr.write(`${failed} of ${targets.length} manifest(s) invalid\n`);
        process.exitCode = 1;
      }
    });

  program
    .command('codegen')
    .description('Generate TypeScript types and JSON Schemas into generated/ from the manifests')
    .option(...CONNECTORS_OPTION, collect)
    .option('--check', 'do not write; exit non-zero and list the stale files if generated/ is not current')
    .option('--out <dir>', "where to write (default: the package's generated/; with --connectors, generated/ beside the first connectors directory)")
    .action(async (opts: { check?: boolean; out?: string }) => {
      const { generateAll, OpenApiWorker, SchemaPool, startConnector, staleFiles, writeFiles } = await import('../codegen/index.ts');
      const { cacheLooksEmpty } = await import('../codegen/cache.ts');
      // With nothing cached (a fresh checkout), openapi-typescript and json-schema-to-typescript
      // load in worker threads while the manifests load here, and each connector's schemas go to
      // the latter as soon as its manifest has loaded; this thread joins in once the OpenAPI
      // document is on its way (generateAll), since those types take longest.
      const worker = new OpenApiWorker();
      const pool = new SchemaPool();
      const cold = cacheLooksEmpty();
      if (cold) {
        worker.warm();
        pool.warm();
        pool.hold();
      }
      let files;
      let GENERATED_DIR;
      try {
        const early = cold ? (m: { manifest: LoadedManifest; source: string }) => startConnector(m.manifest, m.source, pool) : undefined;
        const { ok, failed, root } = await loadAll((await manifests()).manifestFiles(), early);
        if (failed > 0) {
          process.exitCode = 1;
          return;
        }
        const first = (await manifests()).connectorsPath()[0];
        GENERATED_DIR = opts.out !== undefined ? resolve(opts.out) : first !== undefined ? resolve(first, '..', 'generated') : join(root, 'generated');
        // The service's OpenAPI document is built from its route schemas (build-time import only).
        const { buildOpenApiDocument } = await import('../service/openapi.ts');
        files = await generateAll(
          ok,
          (type, i, n) => process.stderr.write(`[${i}/${n}] ${type}\n`),
          {
            document: buildOpenApiDocument(undefined, new Map(ok.map(({ manifest }) => [manifest.type, manifest]))),
            source: 'src/service/openapi.ts',
            worker,
          },
          pool,
        );
      } finally {
        worker.close();
        pool.close();
      }
      const shown = `${relative(process.cwd(), GENERATED_DIR) || '.'}/`;
      if (opts.check) {
        const stale = staleFiles(GENERATED_DIR, files);
        if (stale.length > 0) {
          process.stderr.write(`${shown} is stale; run \`${shown === 'generated/' ? 'npm run codegen' : 'switchboard codegen'}\`:\n`);
          for (const s of stale) process.stderr.write(`  ${s.reason.padEnd(7)} ${shown}${s.path}\n`);
          process.exitCode = 1;
        } else process.stdout.write(`${shown} is current (${files.size} files)\n`);
        return;
      }
      const written = writeFiles(GENERATED_DIR, files);
      process.stdout.write(`${shown}: ${files.size} files, ${written} updated\n`);
    });

  program
    .command('connectors')
    .description('List connector types with their entities and actions (search* runs in hosted mode only)')
    .option(...CONNECTORS_OPTION, collect)
    .option('--json', 'print JSON instead of a table')
    .action(async (opts: { json?: boolean }) => {
      const { manifestFiles, SYNC_ONLY_ACTIONS: SYNC_ONLY } = await manifests();
      const { ok, failed } = await loadAll(manifestFiles());
      // Sync-only actions (changes, scroll) are not run by execute: not listed.
      const rows = ok.flatMap(({ manifest: m }) =>
        [...m.entities.values()].map((e) => ({
          type: m.type,
          entity: e.name,
          actions: [...e.actions.keys()].filter((a) => !SYNC_ONLY.has(a)).join(', '),
          hosted_only_actions: e.def.search ? ['search'] : [],
        })),
      );
      if (opts.json) process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
      else {
        const w = (k: 'type' | 'entity'): number => Math.max(k.length, ...rows.map((r) => r[k].length));
        const line = (a: string, b: string, c: string): string => `${a.padEnd(w('type'))}  ${b.padEnd(w('entity'))}  ${c}\n`;
        process.stdout.write(line('TYPE', 'ENTITY', 'ACTIONS'));
        for (const r of rows) process.stdout.write(line(r.type, r.entity, [r.actions, ...r.hosted_only_actions.map((a) => `${a}*`)].join(', ')));
        if (rows.some((r) => r.hosted_only_actions.length > 0))
          process.stdout.write('\n* hosted only: search queries the data the service has synced; `switchboard exec` runs the others.\n');
      }
      if (failed > 0) process.exitCode = 1;
    });
}
