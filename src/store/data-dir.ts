/**
 * The data directory under a running service (issue 37, item 13).
 *
 * makeDir: Node's mkdirSync(dir, {recursive: true}) loops forever, without returning to
 * JavaScript, when the process's working directory has been removed and `dir` is relative
 * (mkdir ./data is ENOENT, mkdir . is EEXIST, and it tries ./data again): a stopped service whose
 * directory went away spun a core in a worker thread that neither terminate() nor process.exit()
 * could stop. makeDir creates the missing directories one by one, at most one try per path
 * segment, and fails with a clear error otherwise.
 *
 * watchDataFile: a SQLite file removed (or replaced) under a running service is written on, unlinked,
 * and lost with its directory; a disk that fills refuses every write. Checked every `everyMs`:
 * the file still the one opened (device and inode), and its file system not full; either is
 * reported once, as fatal, to `onLost`.
 */
import { mkdirSync, statfsSync, statSync } from 'node:fs';
import { dirname, isAbsolute } from 'node:path';

/** Default interval of watchDataFile (ms): SWITCHBOARD_DATA_DIR_CHECK_MS. */
export const DATA_DIR_CHECK_MS = 5000;

/** Create `dir` and its missing parents (mode for the ones created); bounded by the path's depth. */
export function makeDir(dir: string, mode = 0o777): void {
  const missing: string[] = [];
  let d = dir;
  // One step per path segment: a path has fewer than 4096 of them.
  for (let i = 0; i < 4096; i++) {
    try {
      const st = statSync(d);
      if (!st.isDirectory()) throw Object.assign(new Error(`cannot create the directory ${dir}: ${d} is not a directory`), { code: 'ENOTDIR' });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const parent = dirname(d);
    if (parent === d || (!isAbsolute(d) && (d === '.' || d === ''))) {
      throw Object.assign(
        new Error(`cannot create the directory ${dir}: ${isAbsolute(dir) ? 'its root does not exist' : 'the working directory no longer exists'}`),
        { code: 'ENOENT' },
      );
    }
    missing.push(d);
    d = parent;
  }
  for (const m of missing.reverse()) {
    try {
      mkdirSync(m, { mode });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST')
        throw Object.assign(new Error(`cannot create the directory ${dir}: ${(e as Error).message}`), { code: (e as NodeJS.ErrnoException).code });
    }
  }
}

export interface DataFileWatch {
  stop(): void;
}

/** Check every `everyMs` that `file` is still the file opened and its disk not full; `onLost` once, with why. */
export function watchDataFile(file: string, everyMs: number, onLost: (why: string) => void): DataFileWatch {
  const first = statSync(file);
  let done = false;
  const check = (): void => {
    if (done) return;
    let why: string | undefined;
    try {
      const st = statSync(file);
      if (st.dev !== first.dev || st.ino !== first.ino) why = `the database file ${file} was replaced under the running service`;
      else {
        const fs = statfsSync(dirname(file));
        if (fs.bavail === 0) why = `the disk of the database file ${file} is full`;
      }
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      why =
        code === 'ENOENT'
          ? `the database file ${file} (or its data directory) was removed under the running service`
          : `the database file ${file} cannot be checked: ${(e as Error).message}`;
    }
    if (why === undefined) return;
    done = true;
    clearInterval(timer);
    onLost(why);
  };
  const timer = setInterval(check, Math.max(10, everyMs));
  timer.unref();
  return {
    stop: () => {
      done = true;
      clearInterval(timer);
    },
  };
}
