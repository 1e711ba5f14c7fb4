import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { StorageAdapter } from '@memberkit/types';
import { DEFAULT_SCHEDULE, generateTokenKeyPair, publicKeyOf } from '@memberkit/core';
import { createSqlCatalogue, type SqlCatalogue } from '@memberkit/adapter-sql';
import { createFilesystemStorage } from '@memberkit/adapter-filesystem';
import { CN_PUBLIC_KEY_FILE, CN_SIGNING_KEY_FILE, cnConfigFileSchema, type CnConfig, type CnConfigFile, type CnConfigFileInput } from './config.js';

/** The configuration file of a node folder (a Member Node's has the same name). */
export const CN_CONFIG_FILE_NAME = 'memberkit.config.json';
/** The administrator `memberkit cn init` writes (the same developer subject as a Member Node's first run). */
export const CN_DEV_ADMIN = 'CN=memberkit developer,DC=local';

/** A configuration the operator must fix: the message names the file and the setting. */
export class CnConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** A CN folder's configuration, validated, and where its relative paths start. */
export interface LoadedCnFolder {
  config: CnConfigFile;
  baseDir: string;
  file: string;
}

/** True when the parsed JSON of a configuration file declares a Coordinating Node (`node.type` "cn"). */
export function declaresCoordinatingNode(raw: unknown): boolean {
  const node = (raw as { node?: { type?: unknown } } | null)?.node;
  return typeof node === 'object' && node !== null && node.type === 'cn';
}

/** True when the configuration file exists and declares a Coordinating Node. */
export function isCnConfigFile(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    return declaresCoordinatingNode(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return false;
  }
}

/** Validate a CN configuration: one line per problem, each naming the file and the key. */
export function parseCnConfig(raw: unknown, file: string): CnConfigFile {
  const parsed = cnConfigFileSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => {
    const key = i.path.map(String).join('.') || '(top level)';
    return `invalid configuration in ${file}: ${key}: ${i.message}`;
  });
  throw new CnConfigError(lines.join('\n'));
}

/** Load `{dir}/memberkit.config.json` (or `configFile`) of a CN folder. */
export function loadCnFolder(options: { dir: string; configFile?: string }): LoadedCnFolder {
  const file = options.configFile ? resolve(options.configFile) : join(resolve(options.dir), CN_CONFIG_FILE_NAME);
  if (!existsSync(file)) throw new CnConfigError(`no ${CN_CONFIG_FILE_NAME} at ${file}: create a Coordinating Node with \`memberkit cn init ${options.dir}\``);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CnConfigError(`invalid JSON in ${file}: ${(err as Error).message}`);
  }
  return { config: parseCnConfig(raw, file), baseDir: dirname(file), file };
}

/** A configured path, relative to the configuration's folder. */
export function resolveCnPath(loaded: LoadedCnFolder, p: string): string {
  return isAbsolute(p) ? p : resolve(loaded.baseDir, p);
}

function readKeyFile(loaded: LoadedCnFolder, p: string, setting: string): string {
  const path = resolveCnPath(loaded, p);
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new CnConfigError(`cannot read ${path} (${setting} in ${loaded.file}): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/**
 * The configuration createCoordinatingNode runs on: files read, the CN's own signing key
 * trusted for bearer JWTs (its public key beside the configured `auth.jwt.keys`).
 */
export function toCnConfig(loaded: LoadedCnFolder, port: number): CnConfig {
  const { config } = loaded;
  const basePath = config.server.basePath;
  const signingKeyPath = resolveCnPath(loaded, config.cn.tokens.signingKey);
  const signingKey = existsSync(signingKeyPath) ? readKeyFile(loaded, config.cn.tokens.signingKey, 'cn.tokens.signingKey') : undefined;
  let ownKey: string | undefined;
  if (signingKey !== undefined) {
    try {
      ownKey = publicKeyOf(signingKey);
    } catch (err) {
      throw new CnConfigError(`cn.tokens.signingKey in ${loaded.file}: ${signingKeyPath} is not a private key in PEM (${(err as Error).message})`);
    }
  }
  const a = config.auth;
  const clientCa = (a.clientCa ?? config.server.tls?.ca ?? []).map((p) => readKeyFile(loaded, p, 'auth.clientCa'));
  return {
    node: {
      identifier: config.node.identifier,
      name: config.node.name,
      description: config.node.description,
      baseURL: config.node.baseURL ?? `http://localhost:${port}${basePath}`,
      subject: config.node.subject,
      contactSubject: config.node.contactSubject,
      replicate: false,
      synchronize: false,
      schedule: config.node.schedule ?? DEFAULT_SCHEDULE,
      properties: config.node.properties,
    },
    access: {
      administrators: config.access.administrators,
      // The CN itself and its peers may do everything; its own subject is one of them.
      cnSubjects: [...new Set([config.node.subject, ...config.access.cnSubjects])],
      createPolicy: [],
    },
    auth: {
      clientCa,
      ...(a.proxy ? { proxy: { header: a.proxy.header, trustedProxies: a.proxy.trustedProxies, verifyValue: a.proxy.verifyValue, ...(a.proxy.verifyHeader ? { verifyHeader: a.proxy.verifyHeader } : {}) } } : {}),
      jwt: {
        keys: [...(ownKey ? [ownKey] : []), ...a.jwt.keys.map((p) => readKeyFile(loaded, p, 'auth.jwt.keys'))],
        clockToleranceSeconds: a.jwt.clockToleranceSeconds,
        ...(a.jwt.issuer ? { issuer: a.jwt.issuer } : {}),
        ...(a.jwt.algorithms ? { algorithms: a.jwt.algorithms } : {}),
      },
      // The CN is the identity service: nothing is asked of another CN.
      identity: { lookupSubjectInfo: false, cnSubjectsFromNodeList: false },
    },
    basePath,
    maxPageSize: config.limits.maxPageSize,
    ...(config.limits.maxObjectBytes !== undefined ? { maxObjectBytes: config.limits.maxObjectBytes } : {}),
    cn: config.cn,
    ...(signingKey !== undefined ? { tokenSigningKeyPem: signingKey } : {}),
  };
}

/** The catalogue (SQL store) and storage a CN folder's configuration names (not yet opened). */
export function createCnParts(loaded: LoadedCnFolder): { catalogue: SqlCatalogue; storage: StorageAdapter } {
  const { config } = loaded;
  const c = config.catalogue;
  let catalogue: SqlCatalogue;
  if (c.type === 'sqlite') {
    const file = resolveCnPath(loaded, c.file);
    mkdirSync(dirname(file), { recursive: true });
    catalogue = createSqlCatalogue({ dialect: 'sqlite', connection: file });
  } else {
    let url = c.connection ?? process.env[c.connectionEnv!];
    if (url === undefined || url === '') throw new CnConfigError(`catalogue.connectionEnv in ${loaded.file}: environment variable ${c.connectionEnv} is not set`);
    if (c.dialect === 'sqlite') url = resolveCnPath(loaded, url.replace(/^sqlite:(\/\/)?/, ''));
    const connection = c.dialect === 'postgres' ? { connectionString: url, max: c.poolSize } : c.dialect === 'mysql' ? { uri: url, connectionLimit: c.poolSize } : url;
    catalogue = createSqlCatalogue({ dialect: c.dialect, connection });
  }
  const storage = createFilesystemStorage({ root: resolveCnPath(loaded, config.storage.root) });
  return { catalogue, storage };
}

/**
 * `memberkit cn init DIR`: a CN folder with a configuration on SQLite and files, administered
 * by the local developer subject, and the CN's token signing key pair
 * (cn-jwt-key.pem, private; cn-jwt-key.pub.pem). Refuses to overwrite a configuration.
 */
export function initCnFolder(dir: string, overrides: Partial<CnConfigFileInput> = {}): string {
  const file = join(resolve(dir), CN_CONFIG_FILE_NAME);
  if (existsSync(file)) throw new CnConfigError(`${file} already exists; a node is initialised once`);
  mkdirSync(dirname(file), { recursive: true });
  const keys = generateTokenKeyPair();
  const initial: CnConfigFileInput = {
    node: { type: 'cn', identifier: 'urn:node:CNLOCAL' },
    server: { port: 8090, basePath: '/cn' },
    storage: { type: 'filesystem', root: 'objects' },
    catalogue: { type: 'sqlite', file: 'memberkit-cn.db' },
    access: { administrators: [CN_DEV_ADMIN] },
    cn: { tokens: { signingKey: CN_SIGNING_KEY_FILE } },
    ...overrides,
  };
  writeFileSync(join(dirname(file), CN_SIGNING_KEY_FILE), keys.privateKeyPem, { mode: 0o600 });
  writeFileSync(join(dirname(file), CN_PUBLIC_KEY_FILE), keys.publicKeyPem, { mode: 0o644 });
  writeFileSync(file, JSON.stringify(initial, null, 2) + '\n', { mode: 0o600 });
  return file;
}
