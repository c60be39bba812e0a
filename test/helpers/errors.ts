/** Shared test helper: the SwitchboardError a promise rejects with. */
import { expect } from 'vitest';
import { SwitchboardError } from '../../src/errors/index.ts';

/** Await `p` and return the SwitchboardError it rejected with; fails the test if it resolved or threw something else. */
export async function failure(p: Promise<unknown>): Promise<SwitchboardError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(SwitchboardError);
  return e as SwitchboardError;
}
