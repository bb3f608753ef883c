// A real authorization server for the OAuth client tests: oidc-provider (npm), configured here for
// what an MCP client needs, on 127.0.0.1 with a port the system picks.
//
//   node launcher.mjs --modules DIR [--access-token-ttl SECONDS] [--signing-alg RS256|ES256]
//                     [--scope SCOPE]... [--refresh-tokens always|offline_access]
//
// DIR is the node_modules folder oidc-provider was installed into (npm ci, tests/authserver/
// oidc_provider.py). Prints the issuer URL (http://127.0.0.1:PORT) as the first line of stdout once
// it listens; exits on stdin EOF, SIGTERM or SIGINT. Test code only: every key is made afresh at
// start and everything is kept in memory.
//
// What it serves:
// - discovery at /.well-known/oauth-authorization-server (RFC 8414) and
//   /.well-known/openid-configuration, with code_challenge_methods_supported ["S256"] and
//   authorization_response_iss_parameter_supported;
// - dynamic client registration (RFC 7591) at /register, no initial access token;
// - /authorize with PKCE S256 required of every client, and resource indicators (RFC 8707): any
//   http(s) URL on a loopback host is a resource server, and its access tokens are JWTs (RFC 9068)
//   whose aud is that URL, signed with a key published at /jwks;
// - /token: authorization_code, refresh_token (to clients allowed the refresh_token grant, always or
//   only with offline_access: --refresh-tokens; rotated on every use) and client_credentials;
// - no login page and no consent page: the interaction route signs the fixed account in and grants
//   what was asked, then redirects back, so a user agent that follows redirects with plain GETs
//   (keeping cookies, as any browser does) lands on the redirect_uri with a code.

import { createRequire } from 'node:module';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { resolve as absolute } from 'node:path';
import { parseArgs } from 'node:util';

const { values: options } = parseArgs({
  options: {
    modules: { type: 'string' },
    'access-token-ttl': { type: 'string', default: '300' },
    'signing-alg': { type: 'string', default: 'RS256' },
    scope: { type: 'string', multiple: true, default: ['mcp:read', 'mcp:write'] },
    'refresh-tokens': { type: 'string', default: 'always' },
  },
});
if (!options.modules) {
  process.stderr.write('launcher: --modules DIR (the node_modules holding oidc-provider) is required\n');
  process.exit(2);
}
const ACCOUNT = 'test-user';
const RESOURCE_SCOPES = options.scope.join(' ');
const ACCESS_TOKEN_TTL = Number.parseInt(options['access-token-ttl'], 10);
const SIGNING_ALG = options['signing-alg'];
const REFRESH_TOKENS = options['refresh-tokens'];
if (!['always', 'offline_access'].includes(REFRESH_TOKENS)) {
  process.stderr.write('launcher: --refresh-tokens is always or offline_access\n');
  process.exit(2);
}

// oidc-provider lives in the cache folder, not beside this file: resolve it from there
const resolve = createRequire(absolute(options.modules, '..', 'package.json')).resolve;
const { default: Provider, errors } = await import(pathToFileURL(resolve('oidc-provider')).href);

function signingKey(kind, alg, kid) {
  const settings = kind === 'rsa' ? { modulusLength: 2048 } : { namedCurve: 'P-256' };
  const { privateKey } = generateKeyPairSync(kind, settings);
  return { ...privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
}

function isLoopbackUrl(value) {
  let url;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  return loopback && ['http:', 'https:'].includes(url.protocol) && url.hash === '';
}

// listen first: the issuer URL needs the port
let handler = (_req, res) => {
  res.statusCode = 503;
  res.end();
};
const server = createServer((req, res) => handler(req, res));
await new Promise((done, fail) => {
  server.once('error', fail);
  server.listen(0, '127.0.0.1', done);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks: {
    keys: [signingKey('rsa', 'RS256', 'rs256-1'), signingKey('ec', 'ES256', 'es256-1')],
  },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  // signals support in discovery; the resource scopes themselves come from getResourceServerInfo
  scopes: ['openid', 'offline_access', ...options.scope],
  routes: {
    authorization: '/authorize',
    token: '/token',
    registration: '/register',
    jwks: '/jwks',
    revocation: '/revoke',
  },
  responseTypes: ['code'],
  pkce: { required: () => true },
  // "always": to every client allowed the refresh_token grant, for a code or a refresh.
  // "offline_access": oidc-provider's own rule, when offline_access was granted; it keeps
  // offline_access only when the request also says prompt=consent (OpenID Connect Core 11).
  issueRefreshToken: async (_ctx, client, source) => client.grantTypeAllowed('refresh_token')
    && (REFRESH_TOKENS === 'always'
      ? ['AuthorizationCode', 'RefreshToken'].includes(source.kind)
      : source.scopes.has('offline_access')),
  rotateRefreshToken: true,
  ttl: {
    AccessToken: ACCESS_TOKEN_TTL,
    ClientCredentials: ACCESS_TOKEN_TTL,
    AuthorizationCode: 60,
    Interaction: 600,
    Session: 3600,
    Grant: 3600,
    RefreshToken: 3600,
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // the resource the authorization request named, when the token request omits it
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, resourceIndicator) => {
        if (!isLoopbackUrl(resourceIndicator)) {
          throw new errors.InvalidTarget('only loopback resource servers are known here');
        }
        return {
          scope: RESOURCE_SCOPES,
          audience: resourceIndicator,
          accessTokenTTL: ACCESS_TOKEN_TTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: SIGNING_ALG } },
        };
      },
    },
  },
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
});

// the interaction route: no page, the fixed account signs in and consents to what was asked
provider.use(async (ctx, next) => {
  if (ctx.method !== 'GET' || !ctx.path.startsWith('/interaction/')) {
    return next();
  }
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { prompt, params } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: ACCOUNT } };
  } else if (prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
    if (prompt.details.missingOIDCScope) {
      grant.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
    }
    if (prompt.details.missingOIDCClaims) {
      grant.addOIDCClaims(prompt.details.missingOIDCClaims);
    }
    for (const [indicator, scopes] of Object.entries(prompt.details.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    const grantId = await grant.save();
    result = { consent: details.grantId ? {} : { grantId } };
  } else {
    result = { error: 'access_denied', error_description: `unexpected prompt ${prompt.name}` };
  }
  const location = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
  ctx.status = 303;
  ctx.redirect(location);
});

handler = provider.callback();

function stop() {
  server.close();
  server.closeAllConnections();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();

process.stdout.write(`${issuer}\n`);
