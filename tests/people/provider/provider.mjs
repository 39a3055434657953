// A real OpenID Provider for the suite: node-oidc-provider (npm oidc-provider) on loopback.
//
//   node provider.mjs CONFIG.json
//
// CONFIG: {"port", "issuer", "clients": [{client_id, client_secret, redirect_uris}],
//          "accounts": "<path of a JSON file: {sub: {claims...}}>"}
// The accounts file is read at every sign-in, so a test moves a person between groups by
// rewriting it. The sign-in and consent pages are the library's own development forms
// (devInteractions): any password is taken, the login field names the account.
//
// One knob for refusal tests, POST /__test/next-id-token {"claims": {...}, "expired": bool}:
// the next token response's ID token gets those claims (and an expiry in the past), signed
// with the provider's own key, so only the console's claim checks can refuse it.
//
// Prints "ready <issuer>" once listening; stops on SIGTERM.
import { readFileSync } from 'node:fs';

import { SignJWT, decodeJwt, exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const jwk = { ...(await exportJWK(privateKey)), kid: 'suite-key', alg: 'RS256', use: 'sig' };

function accounts() {
  return JSON.parse(readFileSync(config.accounts, 'utf8'));
}

const provider = new Provider(config.issuer, {
  clients: config.clients.map((c) => ({
    ...c,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_post',
  })),
  jwks: { keys: [jwk] },
  async findAccount(ctx, sub) {
    const account = accounts()[sub];
    if (!account) return undefined;
    return {
      accountId: sub,
      async claims() {
        return { sub, ...account };
      },
    };
  },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name', 'preferred_username', 'groups'],
  },
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  cookies: { keys: ['suite-cookie-key-not-secret'] },
  ttl: {
    AccessToken: 600,
    AuthorizationCode: 60,
    IdToken: 600,
    Interaction: 600,
    Session: 600,
    Grant: 600,
  },
});

let nextIdToken = null;

provider.use(async (ctx, next) => {
  if (ctx.path === '/__test/next-id-token' && ctx.method === 'POST') {
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    nextIdToken = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    ctx.status = 204;
    return;
  }
  await next();
  if (ctx.path === '/token' && nextIdToken && ctx.body && ctx.body.id_token) {
    const claims = { ...decodeJwt(ctx.body.id_token), ...(nextIdToken.claims || {}) };
    if (nextIdToken.expired) {
      const now = Math.floor(Date.now() / 1000);
      claims.iat = now - 1200;
      claims.exp = now - 600;
    }
    nextIdToken = null;
    ctx.body.id_token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'JWT' })
      .sign(privateKey);
  }
});

// The library's warnings about development-only settings are the point here: not on stderr.
process.env.DEBUG = '';
const server = provider.listen(config.port, '127.0.0.1', () => {
  process.stdout.write(`ready ${config.issuer}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
