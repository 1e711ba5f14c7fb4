/**
 * Lockfiles for packages that install memberkit from a release (a generated node or adapter,
 * the release folder itself), derived from the memberkit repository's package-lock.json.
 *
 * Why: `npm ci` from a lockfile needs only tarballs (by integrity), which npm's cache holds
 * once the repository was installed, so a consumer installs with `--offline`; `npm install`
 * without a lockfile needs every package's registry document, which it does not. And the
 * consumer gets exactly the third-party versions the repository was tested with.
 *
 * How: the repository's tree with each public workspace package moved to
 * `node_modules/@memberkit/<name>` (resolved to its tarball), then the part of it the
 * consumer's dependencies reach, following Node's lookup through nested node_modules; the
 * dev/optional flags are recomputed for the consumer.
 */

export interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

export interface Lockfile {
  name?: string;
  version?: string;
  lockfileVersion: number;
  requires?: boolean;
  packages: Record<string, LockEntry>;
}

export interface ConsumerPackage {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** Flags npm writes relative to one root; recomputed for each consumer. */
const ROOT_RELATIVE = ['dev', 'optional', 'devOptional', 'peer', 'extraneous'];

function strip(entry: LockEntry): LockEntry {
  const out: LockEntry = { ...entry };
  for (const key of ROOT_RELATIVE) delete out[key];
  return out;
}

/**
 * The repository's tree as a consumer would install it: third-party packages at their
 * paths, public workspace packages at node_modules/<name> resolved to `resolved(name)`
 * (with their nested node_modules), private workspaces and the root left out.
 */
export function releaseTree(repoLock: Lockfile, resolved: (name: string) => { resolved: string; integrity?: string } | undefined): Record<string, LockEntry> {
  const workspaceDirs = new Map<string, string>(); // folder → package name
  for (const [path, entry] of Object.entries(repoLock.packages)) {
    if (entry.link && path.startsWith('node_modules/') && typeof entry.resolved === 'string') workspaceDirs.set(entry.resolved, path.slice('node_modules/'.length));
  }
  const out: Record<string, LockEntry> = {};
  for (const [path, entry] of Object.entries(repoLock.packages)) {
    if (path === '' || entry.link) continue;
    const ws = [...workspaceDirs].find(([dir]) => path === dir || path.startsWith(`${dir}/`));
    if (!ws) {
      if (!path.startsWith('node_modules/')) continue; // a folder that is no workspace
      out[path] = strip(entry);
      continue;
    }
    const [dir, name] = ws;
    const target = resolved(name);
    if (!target) continue; // private workspace: not released
    const moved = `node_modules/${name}${path.slice(dir.length)}`;
    if (path === dir) {
      const released: LockEntry = { ...strip(entry), resolved: target.resolved, ...(target.integrity ? { integrity: target.integrity } : {}) };
      delete released.name; // the workspace's name is its path now
      out[moved] = released;
    } else {
      out[moved] = strip(entry);
    }
  }
  return out;
}

/** Where Node finds `dep` from the package at `from` ('' is the root): the nearest node_modules. */
function lookup(tree: Record<string, LockEntry>, from: string, dep: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base === '' ? '' : `${base}/`}node_modules/${dep}`;
    if (tree[candidate]) return candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut < 0 ? '' : base.slice(0, cut);
  }
}

interface Edge {
  dep: string;
  optional: boolean;
}

function edgesOf(entry: LockEntry): Edge[] {
  const optionalPeers = new Set(Object.entries(entry.peerDependenciesMeta ?? {}).filter(([, m]) => m.optional).map(([n]) => n));
  return [
    ...Object.keys(entry.dependencies ?? {}).map((dep) => ({ dep, optional: false })),
    ...Object.keys(entry.optionalDependencies ?? {}).map((dep) => ({ dep, optional: true })),
    // Optional peers are installed only when something else needs them.
    ...Object.keys(entry.peerDependencies ?? {}).filter((d) => !optionalPeers.has(d)).map((dep) => ({ dep, optional: false })),
  ];
}

/**
 * The lockfile of `pkg` installed from `tree`: the entries its dependencies reach, with
 * npm's dev / optional / devOptional flags. Throws when a required dependency is missing
 * from the tree (the consumer asks for something the repository does not install).
 */
export function consumerLockfile(tree: Record<string, LockEntry>, pkg: ConsumerPackage): Lockfile {
  /** Paths reached from `roots`, following optional edges or not. */
  const reach = (roots: string[], followOptional: boolean): Set<string> => {
    const seen = new Set<string>();
    const queue: Array<{ from: string; edge: Edge }> = roots.map((dep) => ({ from: '', edge: { dep, optional: false } }));
    while (queue.length > 0) {
      const { from, edge } = queue.shift()!;
      if (edge.optional && !followOptional) continue;
      const path = lookup(tree, from, edge.dep);
      if (!path) {
        if (edge.optional) continue;
        throw new Error(`${edge.dep} (needed by ${from || pkg.name}) is not in memberkit's lockfile`);
      }
      if (seen.has(path)) continue;
      seen.add(path);
      for (const next of edgesOf(tree[path]!)) queue.push({ from: path, edge: next });
    }
    return seen;
  };
  const prodRoots = Object.keys(pkg.dependencies ?? {});
  const allRoots = [...prodRoots, ...Object.keys(pkg.devDependencies ?? {})];
  const all = reach(allRoots, true);
  const prod = reach(prodRoots, true);
  const required = reach(allRoots, false);
  const prodRequired = reach(prodRoots, false);

  const packages: Record<string, LockEntry> = {
    '': {
      name: pkg.name,
      version: pkg.version,
      ...(pkg.dependencies ? { dependencies: pkg.dependencies } : {}),
      ...(pkg.devDependencies ? { devDependencies: pkg.devDependencies } : {}),
    },
  };
  for (const path of [...all].sort()) {
    const entry: LockEntry = { ...tree[path]! };
    if (!prodRequired.has(path)) {
      const dev = !prod.has(path);
      const optional = !required.has(path);
      if (dev) entry.dev = true;
      if (optional) entry.optional = true;
      if (!dev && !optional) entry.devOptional = true;
    }
    packages[path] = entry;
  }
  return { name: pkg.name, version: pkg.version, lockfileVersion: 3, requires: true, packages };
}

/**
 * The lockfile with a `resolved` tarball URL on every registry package (the repository's
 * lockfile omits them, `omit-lockfile-registry-resolved`): without one npm asks the
 * registry for the package's document, which npm's cache may not hold, so `--offline`
 * would fail; with one it reads the tarball from the cache by that URL.
 */
export function withRegistryUrls(lock: Lockfile, registry: string): Lockfile {
  const base = registry.endsWith('/') ? registry : `${registry}/`;
  const packages: Record<string, LockEntry> = {};
  for (const [path, entry] of Object.entries(lock.packages)) {
    const at = path.lastIndexOf('node_modules/');
    if (at < 0 || entry.link || entry.resolved !== undefined || typeof entry.version !== 'string' || typeof entry.integrity !== 'string') {
      packages[path] = entry;
      continue;
    }
    const name = typeof entry.name === 'string' ? entry.name : path.slice(at + 'node_modules/'.length);
    const file = `${name.split('/').pop()}-${entry.version}.tgz`;
    packages[path] = { ...entry, resolved: `${base}${name}/-/${file}` };
  }
  return { ...lock, packages };
}
