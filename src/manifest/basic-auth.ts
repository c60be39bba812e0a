/** HTTP basic credentials: the value a basic auth variant sends (its template renders through this). */
import { SwitchboardError } from '../errors/index.ts';

/**
 * The value of an HTTP basic Authorization header (RFC 7617: UTF-8, base64 of "user:password").
 * A user name with a colon cannot be told apart from the password, so it is refused.
 */
export function basicAuthorization(username: unknown, password: unknown): string | undefined {
  if (username === undefined || username === null || username === '') return undefined;
  const user = String(username);
  if (user.includes(':')) {
    throw new SwitchboardError('invalid_credentials', 'The user name of HTTP basic credentials may not contain ":"', {
      errors: [{ path: '/username', message: 'contains ":"' }],
    });
  }
  return `Basic ${Buffer.from(`${user}:${password === undefined || password === null ? '' : String(password)}`, 'utf8').toString('base64')}`;
}
