#!/usr/bin/env node
// Entry point of the `switchboard` command: runs the TypeScript CLI through tsx's loader.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
