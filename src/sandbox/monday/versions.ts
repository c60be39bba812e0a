/**
 * The API versions monday serves (docs/api-versioning): 2026-07 is in maintenance, 2026-10 is
 * current, 2027-01 the release candidate. A request for any other version (retired, malformed
 * or missing) is answered with the current one, as monday does.
 */
export const SERVED_VERSIONS: Readonly<Record<string, 'maintenance' | 'current' | 'release_candidate'>> = {
  '2026-07': 'maintenance',
  '2026-10': 'current',
  '2027-01': 'release_candidate',
};
