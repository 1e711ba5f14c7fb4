import { generateTokenKeyPair } from '@memberkit/core';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { CATALOGUE_BACKENDS, STORAGE_BACKENDS, catalogueBackend, storageBackend } from './backends/index.js';
import { configSchema, type MemberkitConfig } from './config-schema.js';

export const CONFIG_FILE_NAME = 'memberkit.config.json';
/** The first-run configuration's token signing key (private, PEM), beside the configuration. */
export const DEV_KEY_FILE = 'dev-jwt-key.pem';
/** Its public key, which the first-run configuration trusts in auth.jwt.keys. */
export const DEV_PUBLIC_KEY_FILE = 'dev-jwt-key.pub.pem';
export const DEV_SUBJECT = 'CN=memberkit developer,DC=local';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export interface LoadedConfig {
  config: MemberkitConfig;
  /** Folder relative paths are resolved against. */
  baseDir: string;
  file: string;
  /** True when this call wrote a fresh configuration. */
  created: boolean;
}

/** Resolve a configured path against the config file's folder. */
export function resolvePath(loaded: LoadedConfig, p: string): string {
  return isAbsolute(p) ? p : resolve(loaded.baseDir, p);
}

function describeIssues(error: z.ZodError, file: string): string {
  const lines = error.issues.map((i) => `  - ${i.path.join('.') || '(root)'}: ${i.message}`);
  return `invalid configuration in ${file}:\n${lines.join('\n')}`;
}

export function parseConfig(raw: unknown, file: string): MemberkitConfig {
  const access = (raw as { access?: Record<string, unknown> } | undefined)?.access;
  if (access && typeof access === 'object' && 'localTokens' in access) {
    throw new ConfigError(`invalid configuration in ${file}:\n  - access.localTokens: removed; trust a key in auth.jwt.keys and mint tokens with \`memberkit token --subject S\` (see README "Who is calling")`);
  }
  const result = configSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(describeIssues(result.error, file));
  const config = result.data;
  const problems: string[] = [];
  const check = (section: 'storage' | 'catalogue', backend: { options: z.ZodType } | undefined, known: readonly string[]) => {
    const { type, ...options } = config[section];
    if (!backend) return problems.push(`  - ${section}.type: unknown type '${type}' (known: ${known.join(', ')})`);
    const parsed = backend.options.safeParse(options);
    if (!parsed.success) for (const i of parsed.error.issues) problems.push(`  - ${section}.${i.path.join('.')}: ${i.message}`);
    else config[section] = { type, ...(parsed.data as object) };
    return undefined;
  };
  check('storage', storageBackend(config.storage.type), STORAGE_BACKENDS.map((b) => b.type));
  check('catalogue', catalogueBackend(config.catalogue.type), CATALOGUE_BACKENDS.map((b) => b.type));
  if (config.wrap && !storageBackend(config.storage.type)?.scanner) problems.push(`  - wrap: storage type '${config.storage.type}' cannot be wrapped (no scanner)`);
  if (problems.length) throw new ConfigError(`invalid configuration in ${file}:\n${problems.join('\n')}`);
  return config;
}

/**
 * Load `--config file`, or `{dataDir}/memberkit.config.json`. When neither exists, write a
 * first-run configuration into dataDir: a managed node on files + SQLite whose administrator
 * is the developer, with a generated key pair (dataDir/dev-jwt-key.pem, .pub.pem) whose
 * public key the node trusts for bearer JWTs: `memberkit token --subject S` mints them.
 */
export function loadConfig(options: { dataDir: string; configFile?: string }): LoadedConfig {
  const file = options.configFile ? resolve(options.configFile) : join(resolve(options.dataDir), CONFIG_FILE_NAME);
  if (options.configFile && !existsSync(file)) throw new ConfigError(`configuration file ${file} does not exist`);
  let created = false;
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const keys = generateTokenKeyPair();
    const initial = {
      node: { identifier: 'urn:node:memberkit-local' },
      server: { port: 8080, basePath: '/mn' },
      storage: { type: 'filesystem', root: 'objects' },
      catalogue: { type: 'sqlite', file: 'memberkit.db' },
      access: { administrators: [DEV_SUBJECT] },
      auth: { jwt: { keys: [DEV_PUBLIC_KEY_FILE] } },
    };
    writeFileSync(join(dirname(file), DEV_KEY_FILE), keys.privateKeyPem, { mode: 0o600 });
    writeFileSync(join(dirname(file), DEV_PUBLIC_KEY_FILE), keys.publicKeyPem, { mode: 0o600 });
    writeFileSync(file, JSON.stringify(initial, null, 2) + '\n', { mode: 0o600 });
    created = true;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`);
  }
  return { config: parseConfig(raw, file), baseDir: dirname(file), file, created };
}
