/**
 * The engine's upstream calls as observations (src/observe/hooks.ts): connector type, action,
 * host and path template in; status, attempts, retries, waits and bytes out. Never the rendered
 * URL, headers or bodies. Only used while something observes.
 */
import { SwitchboardError } from '../errors/index.ts';
import { upstreamStarted } from '../observe/hooks.ts';
import type { CompiledAction } from '../manifest/index.ts';

/** What the call reports while it runs (filled in by the engine's call loop). */
export interface CallTrack {
  status: number | undefined;
  bytes: number;
  stats: { attempts: number; retries: number; waitedMs: number } | undefined;
}

/** Run one upstream call (`run`, given the track to fill) under an observation. */
export async function observedCall<T>(connectorType: string, a: CompiledAction, origin: string, run: (track: CallTrack) => Promise<T>): Promise<T> {
  const track: CallTrack = { status: undefined, bytes: 0, stats: undefined };
  const started = performance.now();
  const probe = upstreamStarted({
    connectorType,
    entity: a.entity,
    action: a.name,
    method: a.request.method,
    host: origin.slice(origin.indexOf('//') + 2),
    route: a.request.path.source,
  });
  const end = (errorCode: string | undefined): void =>
    probe?.end({
      status: track.status,
      errorCode,
      attempts: track.stats?.attempts ?? 0,
      retries: track.stats?.retries ?? 0,
      waitedMs: track.stats?.waitedMs ?? 0,
      bytes: track.bytes,
      durationMs: performance.now() - started,
    });
  try {
    const out = await run(track);
    end(undefined);
    return out;
  } catch (e) {
    end(e instanceof SwitchboardError ? e.code : (e as Error)?.name === 'AbortError' ? 'aborted' : 'internal_error');
    throw e;
  }
}
