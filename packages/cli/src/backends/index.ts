import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { MemberkitBackends } from '@memberkit/types';
// The built-in packages' descriptors: light subpaths (zod and types), the adapters load in `create`.
import { memberkitBackends as filesystemBackends } from '@memberkit/adapter-filesystem/backends';
import { memberkitBackends as s3Backends } from '@memberkit/adapter-s3/backends';
import { memberkitBackends as sqlBackends } from '@memberkit/adapter-sql/backends';
import { ConfigError } from '../node-files.js';
import type { Backends, CatalogueBackend, StorageBackend } from './types.js';

export type * from './types.js';

/**
 * The loader of `memberkit serve`'s backends: the descriptors of the built-in adapter packages
 * plus those of every package named in the configuration's `adapters` (each exports
 * `memberkitBackends`, see @memberkit/types ports/adapter-descriptor.ts). `storage.type` and
 * `catalogue.type` select among them.
 */
const BUILT_IN_PACKAGES: ReadonlyArray<readonly [string, unknown]> = [
  ['@memberkit/adapter-filesystem', filesystemBackends],
  ['@memberkit/adapter-s3', s3Backends],
  ['@memberkit/adapter-sql', sqlBackends],
];

/** Add one package's descriptors; a type offered twice is refused (which one would serve is unclear). */
function addPackage(into: { storage: StorageBackend[]; catalogue: CatalogueBackend[]; origin: Map<string, string> }, name: string, backends: MemberkitBackends, fail: (why: string) => never): void {
  for (const section of ['storage', 'catalogue'] as const) {
    for (const d of backends[section] ?? []) {
      const key = `${section}:${d.type}`;
      const other = into.origin.get(key);
      if (other !== undefined) fail(`its ${section} type '${d.type}' is already offered by ${other}`);
      into.origin.set(key, name);
      (into[section] as Array<typeof d>).push(d);
    }
  }
}

/** The `memberkitBackends` export of a module, or why it has none. */
function descriptorsOf(module: unknown): MemberkitBackends | string {
  const b = (module as { memberkitBackends?: unknown } | undefined)?.memberkitBackends as Record<string, unknown> | undefined;
  if (!b || typeof b !== 'object') return 'it exports no descriptors (a named export `memberkitBackends`)';
  const count = (['storage', 'catalogue'] as const).reduce((n, s) => n + (Array.isArray(b[s]) ? (b[s] as unknown[]).length : 0), 0);
  if (count === 0) return 'its `memberkitBackends` lists no storage or catalogue descriptor';
  for (const s of ['storage', 'catalogue'] as const) {
    for (const d of (Array.isArray(b[s]) ? b[s] : []) as Array<Record<string, unknown>>) {
      const ok = typeof d?.type === 'string' && typeof d.create === 'function' && typeof (d.options as Record<string, unknown> | undefined)?.['~standard'] === 'object';
      if (!ok) return `a ${s} descriptor of its \`memberkitBackends\` lacks type, options (a Standard Schema, e.g. zod) or create`;
    }
  }
  return b as MemberkitBackends;
}

function builtIn(): Backends {
  const into = { storage: [] as StorageBackend[], catalogue: [] as CatalogueBackend[], origin: new Map<string, string>() };
  for (const [name, backends] of BUILT_IN_PACKAGES) {
    addPackage(into, name, backends as MemberkitBackends, (why) => {
      throw new Error(`${name}: ${why}`);
    });
  }
  return into;
}

/** The built-in backends (filesystem, tree, s3, s3-bucket, sqlite, sql). */
export const BUILT_IN_BACKENDS: Backends = builtIn();
export const STORAGE_BACKENDS = BUILT_IN_BACKENDS.storage;
export const CATALOGUE_BACKENDS = BUILT_IN_BACKENDS.catalogue;

export function storageBackend(type: string, backends: Backends = BUILT_IN_BACKENDS): StorageBackend | undefined {
  return backends.storage.find((b) => b.type === type);
}

export function catalogueBackend(type: string, backends: Backends = BUILT_IN_BACKENDS): CatalogueBackend | undefined {
  return backends.catalogue.find((b) => b.type === type);
}

const isPath = (spec: string) => spec.startsWith('.') || isAbsolute(spec);

/** The error of a require.resolve that found no package, as opposed to one that found a broken one. */
const notFound = (err: unknown) => ['MODULE_NOT_FOUND', 'ERR_PACKAGE_PATH_NOT_EXPORTED'].includes((err as { code?: string }).code ?? '');

/**
 * The file to import for `spec`: its `./backends` subpath if the package exports one, else its
 * main entry. A path (`./local-adapter`) is a package folder or a module file, relative to the
 * configuration's folder; a name resolves from that folder first, then from the CLI's install.
 * Resolution follows the package's "exports" (with the process's --conditions).
 */
function entryOf(spec: string, baseDir: string): string | undefined {
  if (isPath(spec)) {
    const target = resolve(baseDir, spec);
    if (!existsSync(target)) return undefined;
    if (!statSync(target).isDirectory()) return target;
    const pkgFile = join(target, 'package.json');
    if (!existsSync(pkgFile)) return undefined;
    // A package may import itself by name when it has "exports" (self-reference).
    const name = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { name?: string }).name;
    if (name === undefined) return undefined;
    return firstResolved(createRequire(pkgFile), name);
  }
  for (const from of [join(baseDir, 'memberkit.config.json'), import.meta.filename]) {
    const found = firstResolved(createRequire(from), spec);
    if (found !== undefined) return found;
  }
  return undefined;
}

function firstResolved(require: NodeJS.Require, name: string): string | undefined {
  for (const candidate of [`${name}/backends`, name]) {
    try {
      return require.resolve(candidate);
    } catch (err) {
      if (!notFound(err)) throw err;
    }
  }
  return undefined;
}

/**
 * The built-in backends plus those of the packages in `adapters` (the configuration's key),
 * each resolved from `baseDir` (the configuration's folder). A package that cannot be loaded or
 * offers nothing is a ConfigError naming it and the setting.
 */
export async function loadBackends(adapters: readonly string[], baseDir: string, file: string): Promise<Backends> {
  if (adapters.length === 0) return BUILT_IN_BACKENDS;
  const into = { storage: [...BUILT_IN_BACKENDS.storage], catalogue: [...BUILT_IN_BACKENDS.catalogue], origin: new Map(BUILT_IN_BACKENDS.origin) };
  for (const [i, spec] of adapters.entries()) {
    const fail = (why: string): never => {
      throw new ConfigError(`invalid configuration in ${file}: adapters[${i}]: cannot load adapter package '${spec}': ${why}`);
    };
    if (BUILT_IN_PACKAGES.some(([name]) => name === spec)) continue;
    let entry: string | undefined;
    try {
      entry = entryOf(spec, baseDir);
    } catch (err) {
      fail((err as Error).message.split('\n')[0]!);
    }
    if (entry === undefined) fail(isPath(spec) ? `no package folder or module at ${resolve(baseDir, spec)}` : `not installed (looked from ${baseDir} and from memberkit's own install)`);
    let module: unknown;
    try {
      module = await import(pathToFileURL(entry!).href);
    } catch (err) {
      fail((err as Error).message.split('\n')[0]!);
    }
    const backends = descriptorsOf(module);
    if (typeof backends === 'string') fail(backends);
    else addPackage(into, spec, backends, fail);
  }
  return into;
}
