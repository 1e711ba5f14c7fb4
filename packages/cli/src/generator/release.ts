import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { findMemberkitWorkspace, GeneratorError } from './files.js';
import { consumerLockfile, releaseTree, type ConsumerPackage, type Lockfile } from './lockfile.js';

/**
 * Where a generated node or adapter gets the @memberkit packages: the tarballs of a release
 * that `npm run release` wrote (release/ in a memberkit checkout). Never a registry name:
 * the @memberkit scope is not published, so a plain `^0.1.0` would install whatever
 * someone else put under that name.
 */
export interface Release {
  /** Absolute folder holding the tarballs and their package.json. */
  dir: string;
  /** Package name → tarball file name inside `dir` (every public @memberkit package). */
  tarballs: Record<string, string>;
  /** The memberkit repository's package-lock.json the release was built with (see lockfile.ts). */
  lock: Lockfile;
}

/** The repository's lockfile, copied into the release folder under this name. */
export const RELEASE_LOCK_FILE = 'repository-lock.json';

/** Written by `npm run release` into the CLI's dist, so that a CLI installed from that release finds its siblings. */
export const RELEASE_ORIGIN_FILE = 'release-origin.json';

/** `@memberkit/cli` 0.1.0 → `memberkit-cli-0.1.0.tgz`: the file name `npm pack` gives. */
export function tarballName(name: string, version: string): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

/**
 * The release package.json `npm run release` writes beside the tarballs: it installs the
 * `memberkit` command (`npm install --omit=dev` in that folder), and its `overrides` map
 * every @memberkit package to its tarball, which is how consumers pin all of them.
 */
export function releasePackageJson(version: string, tarballs: Record<string, string>): ConsumerPackage & { private: true; description: string; overrides: Record<string, string> } {
  const spec = (name: string): string => `file:${tarballs[name]}`;
  return {
    name: 'memberkit-release',
    version,
    private: true,
    description: 'memberkit release: `npm install --omit=dev` here installs the memberkit command (node_modules/.bin/memberkit) from the tarballs beside this file',
    dependencies: { '@memberkit/cli': spec('@memberkit/cli') },
    overrides: Object.fromEntries(Object.keys(tarballs).sort().map((name) => [name, spec(name)])),
  };
}

/** A release folder's tarballs, from its package.json (undefined when `dir` holds none). */
export function readRelease(dir: string): Release | undefined {
  const file = join(dir, 'package.json');
  if (!existsSync(file)) return undefined;
  const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; overrides?: Record<string, string> };
  if (pkg.name !== 'memberkit-release' || !pkg.overrides) return undefined;
  const tarballs = Object.fromEntries(Object.entries(pkg.overrides).map(([name, spec]) => [name, spec.replace(/^file:/, '')]));
  const lock = JSON.parse(readFileSync(join(dir, RELEASE_LOCK_FILE), 'utf8')) as Lockfile;
  return { dir: resolve(dir), tarballs, lock };
}

/** The public packages of a memberkit checkout (name → folder), in workspace order. */
export function publicWorkspaces(root: string): Array<{ name: string; version: string; dir: string }> {
  const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces: string[] };
  const out: Array<{ name: string; version: string; dir: string }> = [];
  for (const pattern of rootPkg.workspaces) {
    const dirs = pattern.endsWith('/*')
      ? listDirs(join(root, pattern.slice(0, -2))).map((d) => join(pattern.slice(0, -2), d))
      : [pattern];
    for (const rel of dirs) {
      const file = join(root, rel, 'package.json');
      if (!existsSync(file)) continue;
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name: string; version: string; private?: boolean };
      if (pkg.private !== true) out.push({ name: pkg.name, version: pkg.version, dir: rel.split(sep).join('/') });
    }
  }
  return out;
}

function listDirs(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();
}

/**
 * The release a generator run uses, first found:
 * 1. `MEMBERKIT_RELEASE` (a folder written by `npm run release`);
 * 2. the memberkit checkout this CLI runs from: its `release/` (the tarball names follow
 *    the workspace versions, so a node or adapter can be generated before the release is
 *    built; `npm run release` then writes them);
 * 3. the release this CLI was installed from (`dist/release-origin.json`).
 */
export function findRelease(env: NodeJS.ProcessEnv = process.env, cliDir: string = import.meta.dirname): Release {
  if (env.MEMBERKIT_RELEASE) {
    const release = readRelease(resolve(env.MEMBERKIT_RELEASE));
    if (!release) throw new GeneratorError(`MEMBERKIT_RELEASE=${env.MEMBERKIT_RELEASE} is not a memberkit release folder (no package.json named memberkit-release; run npm run release in a memberkit checkout)`);
    return release;
  }
  const checkout = findMemberkitWorkspace(cliDir);
  if (checkout) {
    const dir = join(checkout.root, 'release');
    return (
      readRelease(dir) ?? {
        dir,
        tarballs: Object.fromEntries(publicWorkspaces(checkout.root).map((p) => [p.name, tarballName(p.name, p.version)])),
        lock: JSON.parse(readFileSync(join(checkout.root, 'package-lock.json'), 'utf8')) as Lockfile,
      }
    );
  }
  const origin = join(cliDir, '..', RELEASE_ORIGIN_FILE);
  if (existsSync(origin)) {
    const { dir } = JSON.parse(readFileSync(origin, 'utf8')) as { dir: string };
    const release = readRelease(dir);
    if (release) return release;
  }
  throw new GeneratorError('no memberkit release found: run `npm run release` in a memberkit checkout and set MEMBERKIT_RELEASE to its release/ folder');
}

/** `file:` specs for a package.json in `fromDir`: relative paths, as npm records them. */
export function releaseSpecs(release: Release, fromDir: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(release.tarballs).map(([name, file]) => {
      const rel = relative(fromDir, join(release.dir, file)).split(sep).join('/');
      return [name, `file:${rel.startsWith('.') ? rel : `./${rel}`}`];
    }),
  );
}

/**
 * The package-lock.json of `pkg` (in `consumerDir`) installed from the release: every
 * @memberkit package from its tarball, everything else at the version the repository was
 * tested with, so `npm ci --offline` works wherever npm's cache holds the repository's install.
 */
export function releaseLockfile(release: Release, consumerDir: string, pkg: ConsumerPackage): Lockfile {
  const specs = releaseSpecs(release, consumerDir);
  const tree = releaseTree(release.lock, (name) => {
    const spec = specs[name];
    if (spec === undefined) return undefined;
    const file = join(release.dir, release.tarballs[name]!);
    // Before `npm run release` has written the tarball, npm computes the integrity itself.
    return { resolved: spec, ...(existsSync(file) ? { integrity: `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}` } : {}) };
  });
  return consumerLockfile(tree, pkg);
}
