import { errorResponse, fail } from '@memberkit/core';
import type { CnRouteModule } from '../http/route-module.js';
import type { CnServices } from '../services.js';
import { keySetDocument, loadTokenKey, type CnTokenKey } from './token-key.js';

/** The CN's token key, read once per services object (undefined when the CN has no signing key). */
const keys = new WeakMap<CnServices, Promise<CnTokenKey | undefined>>();
export function tokenKeyOf(services: CnServices): Promise<CnTokenKey | undefined> {
  let key = keys.get(services);
  if (!key) {
    const pem = services.config.tokenSigningKeyPem;
    key = pem === undefined ? Promise.resolve(undefined) : loadTokenKey(pem);
    keys.set(services, key);
  }
  return key;
}

/**
 * `GET {base}/{v1,v2}/tokens/keys`: the public key the CN signs bearer JWTs with, as a JSON
 * Web Key Set (token-key.ts says why a key set rather than the server certificate). Public;
 * cacheable for a few minutes (verifiers read it again on an unknown `kid` anyway).
 */
export const tokenRoutes: CnRouteModule = (api, { services }) => {
  api.get('/tokens/keys', async (c) => {
    const key = await tokenKeyOf(services);
    if (!key) {
      const err = fail('CNCore.getCapabilities', 'NotFound', `this Coordinating Node signs no tokens: its key (cn.tokens.signingKey) is missing`).withDetailCode('0');
      return errorResponse(err, c.req.method);
    }
    return new Response(JSON.stringify(keySetDocument([key])), {
      headers: { 'Content-Type': 'application/jwk-set+json', 'Cache-Control': 'public, max-age=300' },
    });
  });
};
