/**
 * Credentials of the OpenAPI front end: the accepted tokens (core/auth.ts), the sidecar's OAuth
 * flow and token minting from an app's JWT (core/oauth.ts, core/jwt-tokens.ts), and the refusal of
 * a request whose credentials do not pass.
 */
import type { KeyObject } from 'node:crypto';
import { acceptedTokens, presentedToken } from '../core/auth.ts';
import { jwtTokenServer } from '../core/jwt-tokens.ts';
import { oauthServer, type OAuthClient, type OAuthGrants } from '../core/oauth.ts';
import type { Operation } from '../description.ts';
import type { SimRequest, SimResponse } from '../sim-server.ts';
import type { ErrorAnswers } from './errors.ts';
import type { OpenApiContext } from './types.ts';

export interface Credentials {
  tokens: Set<string>;
  oauth: OAuthClient;
  jwtKeys: Map<string, KeyObject | string>;
  tokenExpiry: Map<string, number>;
  /** The OAuth flow's routes (authorize, token), when the sidecar declares one. */
  oauthRoutes: ((req: SimRequest) => SimResponse | undefined) | undefined;
  /** Minting a token from an app's JWT (the sidecar's jwt_tokens). */
  mintRoute: ((authorization: string) => SimResponse) | undefined;
  /** The answer refusing a request's credentials, or undefined when they pass. */
  refuse(op: Operation, req: SimRequest): SimResponse | undefined;
  /** Expire every access token the OAuth flow issued so far. */
  expireAccessTokens(): void;
}

export function credentials(ctx: OpenApiContext, errors: ErrorAnswers): Credentials {
  const { d, sidecar, options } = ctx;
  const { errorResponse } = errors;
  const { tokens, check: checkTokens } = acceptedTokens(options.tokens, sidecar);
  const oauth: OAuthClient = {
    clientId: options.oauthClient?.clientId ?? 'sim_client',
    clientSecret: options.oauthClient?.clientSecret ?? 'sim_secret',
    deny: false,
  };
  const grants: OAuthGrants = { expiries: new Map(), refreshTokens: new Map() };
  const oauthRoutes =
    sidecar.oauth === undefined
      ? undefined
      : oauthServer(
          sidecar.oauth,
          oauth,
          tokens,
          (e) =>
            sidecar.error?.body === undefined
              ? { status: e.status, json: { error: e.code, error_description: e.message } }
              : errorResponse({ status: e.status, code: e.code, message: e.message }),
          Date.now,
          grants,
        );
  const simNow = options.now ?? Date.now;
  const jwtKeys = new Map<string, KeyObject | string>(Object.entries(options.jwtKeys ?? {}));
  const tokenExpiry = new Map<string, number>();
  const mintRoute =
    sidecar.jwt_tokens === undefined
      ? undefined
      : jwtTokenServer(
          sidecar.jwt_tokens,
          jwtKeys,
          tokens,
          tokenExpiry,
          (e) => errorResponse({ status: e.status, code: 'unauthorized', message: e.message }),
          simNow,
        );
  const refuse = (op: Operation, req: SimRequest): SimResponse | undefined => {
    const unauthorized = d.checkAuth(op, req);
    if (unauthorized !== null) return errorResponse(unauthorized, op);
    if (sidecar.auth?.bearer === true && op.security.length === 0 && presentedToken(String(req.headers.authorization ?? '')) === undefined) {
      return errorResponse({ status: 401, code: 'unauthorized', message: 'Requires authentication' }, op);
    }
    if (checkTokens && (op.security.length > 0 || sidecar.auth?.bearer === true)) {
      // A token in the Authorization header, else the API keys the operation's security names (X-Figma-Token-like
      // headers; an application key and a user token in the query), every one of them accepted.
      const bearer = presentedToken(String(req.headers.authorization ?? ''));
      const keys = bearer === undefined ? d.apiKeys(op, req) : [];
      const presented = bearer ?? keys.find((k) => !tokens.has(k)) ?? keys[0];
      if (presented === undefined || !tokens.has(presented) || (tokenExpiry.get(presented) ?? Infinity) <= simNow())
        return errorResponse({ status: 401, code: 'invalid_token', message: 'Access token invalid' }, op);
      const expiry = grants.expiries.get(presented);
      if (expiry !== undefined && expiry <= Date.now()) {
        return errorResponse(
          {
            status: 401,
            code: 'expired_token',
            message: `The OAuth token used to make this call expired ${String(Math.max(0, Math.floor((Date.now() - expiry) / 1000)))} second(s) ago.`,
          },
          op,
        );
      }
    }
    return undefined;
  };
  const expireAccessTokens = (): void => {
    const past = Date.now() - 1000;
    for (const t of grants.expiries.keys()) grants.expiries.set(t, past);
  };
  return { tokens, oauth, jwtKeys, tokenExpiry, oauthRoutes, mintRoute, refuse, expireAccessTokens };
}
