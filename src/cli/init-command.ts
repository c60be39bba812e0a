/**
 * `switchboard init <type> --from-openapi <file> | --from-graphql <sdl> --endpoint <url>
 * [--entities a,b] [--out <dir>] [--source <url>] [--force] [--report]`: scaffold `<out>/<type>/connector.yaml` from the vendor's
 * own description, with a copy of the description beside it (vendor_description), guesses
 * marked `# check:` and a report of what could not be inferred. The manifest is loaded before it
 * is written: what init writes, `switchboard validate` accepts.
 */
import type { Command } from 'commander';
import { SwitchboardError } from '../errors/index.ts';
import { failWith, plural } from './cli-support.ts';

interface InitOptions {
  fromOpenapi?: string;
  fromGraphql?: string;
  endpoint?: string;
  entities?: string;
  out: string;
  force?: boolean;
  source?: string;
  sidecar?: string;
  report?: boolean;
}

export function registerInitCommand(program: Command): void {
  program
    .command('init')
    .description(
      "Scaffold a connector manifest from the vendor's OpenAPI 3 or GraphQL description: <out>/<type>/connector.yaml, guesses marked # check:, a report of what it could not infer",
    )
    .argument('<type>', 'connector type to create, e.g. asana ([a-z][a-z0-9_]*)')
    .option('--from-openapi <file>', 'OpenAPI 3.x description (JSON or YAML)')
    .option('--from-graphql <sdl>', 'GraphQL schema (SDL file)')
    .option('--endpoint <url>', 'with --from-graphql: the GraphQL endpoint URL, e.g. https://api.example.com/graphql')
    .option('--entities <names>', 'comma-separated entities to scaffold (default: every one found)')
    .option('--out <dir>', 'connectors directory to write into (then use it with --connectors <dir>)', 'connectors')
    .option('--source <url>', "where the description came from, recorded as vendor_description.source (default: the file's name)")
    .option(
      '--sidecar <file>',
      'with --from-openapi: a simulator sidecar (simulator.yaml) whose resources declare which RPC method lists, gets, creates or updates what; copied beside the manifest',
    )
    .option('--force', 'overwrite an existing connector.yaml')
    .option('--report', 'also print, per auth variant, entity and action, what was inferred and how sure it is (certain, guessed and why, not inferred)')
    .action(async (type: string, opts: InitOptions) => {
      try {
        await init(type, opts);
      } catch (e) {
        failWith(e);
      }
    });
}

async function init(type: string, opts: InitOptions): Promise<void> {
  const { copyFileSync, existsSync, mkdirSync, writeFileSync } = await import('node:fs');
  const { basename, extname, join, relative, resolve } = await import('node:path');
  if (!/^[a-z][a-z0-9_]*$/.test(type))
    throw new SwitchboardError('invalid_params', `The type "${type}" must be lower case letters, digits and _, starting with a letter (e.g. asana)`);
  if ((opts.fromOpenapi === undefined) === (opts.fromGraphql === undefined))
    throw new SwitchboardError('invalid_params', 'Give one of --from-openapi <file> or --from-graphql <sdl> --endpoint <url>');
  if (opts.fromGraphql !== undefined && opts.endpoint === undefined)
    throw new SwitchboardError('invalid_params', '--from-graphql needs --endpoint <url>, the GraphQL endpoint (e.g. https://api.example.com/graphql)');
  const source = (opts.fromOpenapi ?? opts.fromGraphql)!;
  const origin = opts.source ?? basename(source);
  if (!existsSync(source)) throw new SwitchboardError('invalid_params', `No file ${source}`, { details: { file: source } });
  const dir = resolve(opts.out, type);
  const file = join(dir, 'connector.yaml');
  if (existsSync(file) && !opts.force)
    throw new SwitchboardError('invalid_params', `${relative(process.cwd(), file) || file} exists; pass --force to overwrite it`, { details: { file } });
  const entities = opts.entities
    ?.split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const ext = extname(source).toLowerCase() || (opts.fromOpenapi ? '.yaml' : '.graphql');
  const descriptionPath = `${opts.fromOpenapi ? 'openapi' : 'schema'}${ext}`;
  const started = performance.now();

  const { renderScaffold } = await import('../factory/scaffold.ts');
  if (opts.sidecar !== undefined && opts.fromOpenapi === undefined) throw new SwitchboardError('invalid_params', '--sidecar goes with --from-openapi');
  if (opts.sidecar !== undefined && !existsSync(opts.sidecar))
    throw new SwitchboardError('invalid_params', `No file ${opts.sidecar}`, { details: { file: opts.sidecar } });
  let sidecar;
  if (opts.sidecar !== undefined) {
    try {
      sidecar = (await import('../simulator/sidecar.ts')).loadSidecar(opts.sidecar);
    } catch (e) {
      throw new SwitchboardError('invalid_params', (e as Error).message, { details: { file: opts.sidecar } });
    }
  }
  const scaffold = opts.fromOpenapi
    ? await (await import('../factory/init-openapi.ts')).scaffoldFromOpenApi(source, { type, entities, descriptionPath, source: origin, sidecar })
    : await (
        await import('../factory/init-graphql.ts')
      ).scaffoldFromGraphql(source, { type, entities, descriptionPath, source: origin, endpoint: opts.endpoint! });
  const yaml = renderScaffold(scaffold);

  // What init writes must load: a failure here is a bug of init, reported as such, nothing written.
  mkdirSync(dir, { recursive: true });
  if (resolve(source) !== resolve(dir, descriptionPath)) copyFileSync(source, join(dir, descriptionPath));
  if (opts.sidecar !== undefined && resolve(opts.sidecar) !== resolve(dir, 'simulator.yaml')) copyFileSync(opts.sidecar, join(dir, 'simulator.yaml'));
  const { loadManifestText, ManifestError } = await import('../manifest/index.ts');
  let loaded;
  try {
    loaded = loadManifestText(yaml, file);
  } catch (e) {
    if (e instanceof ManifestError)
      throw new SwitchboardError(
        'internal_error',
        `switchboard init produced a manifest that does not load (a bug; please report it with the description):\n${e.message}`,
      );
    throw e;
  }
  writeFileSync(file, yaml);
  const ms = Math.round(performance.now() - started);
  const shown = relative(process.cwd(), file) || file;
  const lines = yaml.split('\n').length - 1;
  process.stdout.write(
    `Wrote ${shown} (${lines} lines, ${plural(loaded.entities.size, 'entity', 'entities')}: ${[...loaded.entities.values()].map((e) => `${e.name} [${[...e.actions.keys()].join(', ')}]`).join('; ')}) and ${join(relative(process.cwd(), dir) || '.', descriptionPath)} in ${ms} ms.\n` +
      `${plural(scaffold.guesses.length, 'guess', 'guesses')} marked "# check:".\n`,
  );
  if (scaffold.report.length > 0) {
    process.stdout.write(`Not inferred:\n${scaffold.report.map((r) => `  - ${r}`).join('\n')}\n`);
  }
  if (opts.report) process.stdout.write(`\n${(await import('../factory/report.ts')).renderReport(scaffold)}\n`);
  const out = relative(process.cwd(), resolve(opts.out)) || '.';
  process.stdout.write(`Next: switchboard validate --connectors ${out} && switchboard describe ${type} --connectors ${out}\n`);
}
