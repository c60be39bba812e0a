#!/usr/bin/env node
// Entry point of the `switchboard` command: the CLI compiled to dist/ by `npm run build`
// (run by `npm install` through `prepare`). Development runs the sources: `npm run dev -- <args>`.
import { existsSync } from 'node:fs';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('switchboard: dist/ is missing. Build it once with `npm run build` (npm install runs it for you).\n');
  process.exit(1);
}
await import(main.href);
