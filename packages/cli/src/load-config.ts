import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { BUILT_IN_BACKENDS, catalogueBackend, loadBackends, storageBackend, type Backends } from './backends/index.js';
import type { z } from 'zod';
import type { OptionsSchema } from '@memberkit/types';
import { describeIssues, keyPath, nearestKey, parseJsonText } from './config-issues.js';
import { configSchema, DEFAULT_NODE_IDENTIFIER, type MemberkitConfig } from './config-schema.js';
import { CONFIG_FILE_NAME, ConfigError, DEV_KEY_FILE, DEV_PUBLIC_KEY_FILE, DEV_SUBJECT } from './node-files.js';

export { CONFIG_FILE_NAME, ConfigError, DEV_KEY_FILE, DEV_PUBLIC_KEY_FILE, DEV_SUBJECT };

export interface LoadedConfig {
  config: MemberkitConfig;
  /** Folder relative paths are resolved against. */
  baseDir: string;
  file: string;
  /** True when this call wrote a fresh configuration. */
  created: boolean;
  /** The backends `storage.type` and `catalogue.type` were chosen from (built-in plus `adapters`). */
  backends: Backends;
}

/** Resolve a configured path against the config file's folder. */
export function resolvePath(loaded: LoadedConfig, p: string): string {
  return isAbsolute(p) ? p : resolve(loaded.baseDir, p);
}

/** Whether a schema is zod's (the built-in adapters' and most others': the same hoisted zod as ours). */
const isZod = (schema: unknown): schema is z.ZodType => typeof (schema as { safeParse?: unknown }).safeParse === 'function' && '_zod' in (schema as object);

/**
 * Validate a backend's section. A zod schema is read as the main schema is (nearest valid key
 * for a typo); any other Standard Schema gives its own messages, each with its key path.
 */
function validateSection(schema: OptionsSchema, options: object, section: 'storage' | 'catalogue'): { value: object } | { problems: string[] } {
  if (isZod(schema)) {
    const parsed = schema.safeParse(options);
    return parsed.success ? { value: parsed.data as object } : { problems: describeIssues(parsed.error, schema, [section], ['type']) };
  }
  const result = schema['~standard'].validate(options);
  if (result instanceof Promise) return { problems: [`${section}: the options schema of this type validates asynchronously (it must not)`] };
  if (!result.issues) return { value: result.value as object };
  return { problems: result.issues.map((i) => `${keyPath([section], (i.path ?? []).map((p) => (typeof p === 'object' ? p.key : p)))}: ${i.message}`) };
}

/** One line per problem, each naming the file. */
function invalid(file: string, problems: readonly string[]): ConfigError {
  return new ConfigError(problems.map((p) => `invalid configuration in ${file}: ${p}`).join('\n'));
}

/** Validate a configuration; its storage and catalogue sections against the backends' schemas. */
export function parseConfig(raw: unknown, file: string, backends: Backends = BUILT_IN_BACKENDS): MemberkitConfig {
  const access = (raw as { access?: Record<string, unknown> } | undefined)?.access;
  if (access && typeof access === 'object' && 'localTokens' in access) {
    throw invalid(file, ['access.localTokens: removed; trust a key in auth.jwt.keys and mint tokens with `memberkit token --subject S` (see README "Who is calling")']);
  }
  const result = configSchema.safeParse(raw);
  if (!result.success) throw invalid(file, describeIssues(result.error, configSchema));
  const config = result.data;
  const problems: string[] = [];
  const check = (section: 'storage' | 'catalogue') => {
    const { type, ...options } = config[section];
    const backend = section === 'storage' ? storageBackend(type, backends) : catalogueBackend(type, backends);
    if (!backend) {
      const known = backends[section].map((b) => b.type);
      const near = nearestKey(type, known);
      return problems.push(`${section}.type: unknown type '${type}'${near ? ` — did you mean ${near}?` : ''} (known: ${known.join(', ')}; an adapter package named in "adapters" may offer more)`);
    }
    const parsed = validateSection(backend.options, options, section);
    if ('problems' in parsed) problems.push(...parsed.problems);
    else config[section] = { type, ...parsed.value };
    return undefined;
  };
  check('storage');
  check('catalogue');
  if (config.wrap && !storageBackend(config.storage.type, backends)?.wrappable) problems.push(`wrap: storage type '${config.storage.type}' cannot be wrapped (no scanner)`);
  if (problems.length) throw invalid(file, problems);
  return config;
}

/**
 * Write a first-run configuration into `dir` (created if needed): a managed node on files +
 * SQLite whose administrator is the developer, with a generated key pair (dir/dev-jwt-key.pem,
 * .pub.pem) whose public key the node trusts for bearer JWTs: `memberkit token --subject S`
 * mints them. Refuses to overwrite an existing configuration.
 */
export async function initNode(dir: string): Promise<string> {
  const file = join(resolve(dir), CONFIG_FILE_NAME);
  if (existsSync(file)) throw new ConfigError(`${file} already exists; a node is initialised once`);
  mkdirSync(dirname(file), { recursive: true });
  const { generateTokenKeyPair } = await import('@memberkit/core');
  const keys = generateTokenKeyPair();
  const initial = {
    node: { identifier: DEFAULT_NODE_IDENTIFIER },
    server: { port: 8080, basePath: '/mn' },
    storage: { type: 'filesystem', root: 'objects' },
    catalogue: { type: 'sqlite', file: 'memberkit.db' },
    access: { administrators: [DEV_SUBJECT] },
    auth: { jwt: { keys: [DEV_PUBLIC_KEY_FILE] } },
  };
  writeFileSync(join(dirname(file), DEV_KEY_FILE), keys.privateKeyPem, { mode: 0o600 });
  writeFileSync(join(dirname(file), DEV_PUBLIC_KEY_FILE), keys.publicKeyPem, { mode: 0o600 });
  writeFileSync(file, JSON.stringify(initial, null, 2) + '\n', { mode: 0o600 });
  return file;
}

/**
 * Load `--config file`, or `{dataDir}/memberkit.config.json`. A missing configuration is an
 * error (a mistyped folder must not become a new, empty node), unless `init` is set: then a
 * first-run configuration is written there (`memberkit init`, `serve --init`, `npm start`).
 */
export async function loadConfig(options: { dataDir: string; configFile?: string; init?: boolean }): Promise<LoadedConfig> {
  const file = options.configFile ? resolve(options.configFile) : join(resolve(options.dataDir), CONFIG_FILE_NAME);
  if (options.configFile && !existsSync(file)) throw new ConfigError(`configuration file ${file} does not exist`);
  let created = false;
  if (!existsSync(file)) {
    const dir = dirname(file);
    if (!options.init) {
      const shown = options.dataDir;
      throw new ConfigError(existsSync(dir)
        ? `no ${CONFIG_FILE_NAME} in ${dir}: create a node there with \`memberkit init ${shown}\` (or serve --init), or name the folder that holds one`
        : `folder ${dir} does not exist: create a node with \`memberkit init ${shown}\` (or serve --init), or check the folder name`);
    }
    await initNode(dir);
    created = true;
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const parsed = parseJsonText(text);
  if ('error' in parsed) throw new ConfigError(`invalid JSON in ${file}: ${parsed.error}`);
  const baseDir = dirname(file);
  // Adapter packages are loaded before validation: their descriptors check their sections.
  const adapters = (parsed.value as { adapters?: unknown } | null)?.adapters;
  const named = Array.isArray(adapters) && adapters.every((a) => typeof a === 'string') ? adapters : [];
  const backends = await loadBackends(named, baseDir, file);
  return { config: parseConfig(parsed.value, file, backends), baseDir, file, created, backends };
}
