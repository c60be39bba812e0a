#!/usr/bin/env node
// Build the published JavaScript: `tsc -p tsconfig.build.json` (incremental, so a build with no
// change takes about a second), then copy the non-TypeScript files that src/ reads at run time
// (JSON extracts, GraphQL SDL, static assets) beside the compiled modules in dist/src/.
// Plain JavaScript on purpose: it runs from `prepare`, before anything else is built.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, statSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  // Installed from a packed tarball or the registry: no devDependencies, and the package ships its
  // dist/ already built. Nothing to do then; without dist/ there is nothing to run, so say so.
  if (existsSync(join(root, 'dist', 'src', 'cli', 'main.js'))) process.exit(0);
  process.stderr.write(
    'build: TypeScript is not installed and dist/ is missing; run `npm install` (with devDependencies) in the repository, then `npm run build`\n',
  );
  process.exit(1);
}
try {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
} catch {
  process.stderr.write('build: tsc failed (see above); dist/ was not updated\n');
  process.exit(1);
}

function* assets(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) yield* assets(p);
    else if (!entry.name.endsWith('.ts')) yield p;
  }
}
let copied = 0;
for (const file of assets(join(root, 'src'))) {
  const target = join(root, 'dist', relative(root, file));
  if (existsSync(target) && statSync(target).mtimeMs >= statSync(file).mtimeMs) continue;
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(file, target);
  copied++;
}
if (copied > 0) process.stdout.write(`build: copied ${copied} asset file(s) to dist/\n`);
