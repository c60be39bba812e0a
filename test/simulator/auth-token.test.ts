/** The token an Authorization header presents, whatever its scheme's name (an RFC 7235 token: Klaviyo-API-Key, SSWS, Bearer) or Basic's password. */
import { describe, expect, it } from 'vitest';
import { headerToken, presentedToken } from '../../src/simulator/core/auth.ts';

describe('presentedToken', () => {
  it('reads the token after any scheme, dashes included; the password of Basic', () => {
    expect(presentedToken('Bearer tok_1')).toBe('tok_1');
    expect(presentedToken('SSWS 00QCjAl4MlV')).toBe('00QCjAl4MlV');
    expect(presentedToken('Klaviyo-API-Key pk_abc123')).toBe('pk_abc123');
    expect(presentedToken(`Basic ${Buffer.from('me@example.com/token:secret').toString('base64')}`)).toBe('secret');
    expect(presentedToken('pk_abc123')).toBeUndefined();
    expect(headerToken('Klaviyo-API-Key pk_abc123')).toBe('pk_abc123');
    expect(headerToken('pk_abc123')).toBe('pk_abc123');
  });
});
