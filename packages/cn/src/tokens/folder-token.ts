import { existsSync, readFileSync } from 'node:fs';
import { CnConfigError, loadCnFolder, resolveCnPath } from '../cn-folder.js';
import { loadTokenKey, signToken } from './token-key.js';

export interface FolderTokenOptions {
  subject: string;
  /** Lifetime in seconds. Default cn.tokens.ttlSeconds. */
  ttlSeconds?: number;
  configFile?: string;
}

/**
 * `memberkit cn token --subject S DIR`: a bearer JWT for S signed with the CN folder's key
 * (cn.tokens.signingKey), `iss` from cn.tokens.issuer. The CN trusts it, and so does every
 * Member Node that trusts the CN's published key set (auth.jwt.jwksUrl).
 */
export async function tokenFromFolder(dir: string, options: FolderTokenOptions): Promise<string> {
  const loaded = loadCnFolder({ dir, ...(options.configFile ? { configFile: options.configFile } : {}) });
  const tokens = loaded.config.cn.tokens;
  const path = resolveCnPath(loaded, tokens.signingKey);
  if (!existsSync(path)) throw new CnConfigError(`no token signing key at ${path} (cn.tokens.signingKey in ${loaded.file}): \`memberkit cn init\` writes one; or name an EC P-256, RSA or Ed25519 private key (PEM)`);
  let key;
  try {
    key = await loadTokenKey(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new CnConfigError(`cn.tokens.signingKey in ${loaded.file} (${path}): ${(err as Error).message}`);
  }
  return signToken(key, { subject: options.subject, ttlSeconds: options.ttlSeconds ?? tokens.ttlSeconds, ...(tokens.issuer ? { issuer: tokens.issuer } : {}) });
}
