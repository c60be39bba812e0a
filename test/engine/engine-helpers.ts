/** Shared by engine*.test.ts: the test API (test/fixtures/testapi-server.ts) and a runtime on it. */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { ConnectorRuntime, type RuntimeOptions } from '../../src/engine/index.ts';
import { startTestApi, testManifest, type TestApi } from '../fixtures/testapi-server.ts';

/** The calling file's test API once useTestApi's beforeAll ran (a live binding: each test file has its own). */
export let api: TestApi;

/** Starts the test API for the calling file, resets it before each test and closes it after the file. */
export function useTestApi(): void {
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());
  beforeEach(() => api.reset());
}

/** A runtime on the test manifest, pointed at the test API, with no limiter and quick retries. */
export function runtime(options: RuntimeOptions = {}, credentials: unknown = { api_key: 'good-key' }): ConnectorRuntime {
  return new ConnectorRuntime(testManifest, credentials, { baseUrl: api.url, limiter: null, retry: { baseDelayMs: 1 }, ...options });
}
