/** `vendor_description`: the vendored API description beside the manifest. */
import { statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import type { Manifest } from '../../../generated/manifest.ts';
import type { LoadedManifest } from '../compile.ts';
import type { CheckContext } from './checker.ts';

/**
 * vendor_description.path: relative to the manifest's directory, inside it (a connector's folder
 * is self-contained, and is what the package ships), and an existing file.
 */
export function checkVendorDescription({ check, file }: CheckContext, vd: NonNullable<Manifest['vendor_description']>): LoadedManifest['vendorDescription'] {
  const at = ['vendor_description', 'path'];
  const dir = dirname(resolve(file));
  const target = resolve(dir, vd.path);
  const inside = relative(dir, target);
  if (isAbsolute(vd.path) || inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
    check.add(at, `"${vd.path}" must be a file inside the manifest's directory (${dir}), given relative to it, e.g. openapi.yaml`);
    return undefined;
  }
  let isFile: boolean;
  try {
    isFile = statSync(target).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) {
    check.add(at, `no file ${vd.path} beside the manifest (looked for ${target}); vendor the description there or fix the path`);
    return undefined;
  }
  return { file: target, format: vd.format };
}
