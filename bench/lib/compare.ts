// --compare <ref>: another commit of memberkit, checked out in a temporary git worktree and run
// from its TypeScript sources (tsx, as `npm start` does; nothing to build), measured in the
// same rounds as this checkout and the baseline.
//
// No network install: the worktree gets a node_modules of its own whose entries link to this
// checkout's installed packages, except the workspace packages (@memberkit/*), which link to
// the worktree's own folders so that every import of memberkit code resolves to the ref's.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { ROOT, runJsonScript } from './common.js';
import type { SeedOptions } from './seed.js';

/** A failure of --compare that ends the run with its message as the one line printed. */
export class CompareError extends Error {}

export interface RefCheckout {
  /** The ref as given on the command line. */
  readonly ref: string;
  readonly commit: string;
  readonly short: string;
  /** The worktree. */
  readonly root: string;
  /** Seeds `dir` through the ref's own bench seeding (its adapters, its data folder format). */
  seedCatalogue(dir: string, options: SeedOptions, backend: string): Promise<string[]>;
  seedLarge(dir: string, pid: string, size: number, backend: string): Promise<{ path: string; sha1: string }>;
  /** Removes the worktree (idempotent; also called on SIGINT). */
  remove(): void;
}

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The workspace folders of the checkout at `root` (globs of the form `dir/*` or plain paths), with their package names. */
function workspaces(root: string): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces?: string[] };
  const byName = new Map<string, string>();
  const add = (path: string) => {
    const file = join(root, path, 'package.json');
    if (!existsSync(file)) return;
    const { name } = JSON.parse(readFileSync(file, 'utf8')) as { name?: string };
    if (name) byName.set(name, path);
  };
  for (const pattern of pkg.workspaces ?? []) {
    if (pattern.endsWith('/*')) {
      const parent = pattern.slice(0, -2);
      if (!existsSync(join(root, parent))) continue;
      for (const entry of readdirSync(join(root, parent), { withFileTypes: true })) if (entry.isDirectory()) add(join(parent, entry.name));
    } else add(pattern);
  }
  return byName;
}

/** Whether `path` (an entry of this checkout's node_modules) is npm's link to one of its workspaces. */
function isWorkspaceLink(path: string): boolean {
  if (!lstatSync(path).isSymbolicLink()) return false;
  const target = realpathSync(path);
  return target.startsWith(ROOT + '/') && !target.startsWith(join(ROOT, 'node_modules') + '/');
}

function linkNodeModules(root: string): void {
  const own = workspaces(root);
  const source = join(ROOT, 'node_modules');
  const target = join(root, 'node_modules');
  mkdirSync(target, { recursive: true });
  const scopesOfWorkspaces = new Set([...own.keys()].filter((n) => n.startsWith('@')).map((n) => n.split('/')[0]!));
  for (const entry of readdirSync(source)) {
    if (own.has(entry)) continue;
    const from = join(source, entry);
    if (entry.startsWith('@') && (scopesOfWorkspaces.has(entry) || readdirSync(from).some((c) => isWorkspaceLink(join(from, c))))) {
      mkdirSync(join(target, entry), { recursive: true });
      for (const child of readdirSync(from)) {
        if (own.has(`${entry}/${child}`) || isWorkspaceLink(join(from, child))) continue;
        symlinkSync(join(from, child), join(target, entry, child));
      }
    } else if (!isWorkspaceLink(from)) {
      symlinkSync(from, join(target, entry));
    }
  }
  for (const [name, path] of own) {
    const link = join(target, name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(relative(dirname(link), join(root, path)), link);
  }
  // Packages npm installed into a workspace's own node_modules (version conflicts).
  for (const path of workspaces(ROOT).values()) {
    const nested = join(ROOT, path, 'node_modules');
    if (existsSync(nested) && existsSync(join(root, path)) && !existsSync(join(root, path, 'node_modules'))) symlinkSync(nested, join(root, path, 'node_modules'));
  }
}

/** Checks out `ref` in a worktree under `tmp` and prepares it to run. Throws CompareError with a one-line reason. */
export function prepareRef(ref: string, tmp: string): RefCheckout {
  let commit: string;
  try {
    commit = git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new CompareError(`--compare ${ref}: not a commit of this repository`);
  }
  const short = commit.slice(0, 9);
  const root = join(tmp, `ref-${short}`);
  try {
    git(['worktree', 'add', '--detach', root, commit]);
  } catch (err) {
    throw new CompareError(`--compare ${ref}: git worktree add failed: ${String((err as { stderr?: string }).stderr ?? err).trim().split('\n')[0]}`);
  }
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    // The links first (rm never follows them, but the installed packages must not be touched).
    rmSync(join(root, 'node_modules'), { recursive: true, force: true });
    try {
      git(['worktree', 'remove', '--force', root]);
    } catch {
      rmSync(root, { recursive: true, force: true });
      try {
        git(['worktree', 'prune']);
      } catch {
        // Nothing more to clean; a stale entry would be pruned by git later.
      }
    }
  };
  try {
    if (!existsSync(join(root, 'packages/cli/src/bin.ts'))) throw new CompareError(`--compare ${ref}: ${short} has no packages/cli/src/bin.ts to start`);
    linkNodeModules(root);
  } catch (err) {
    remove();
    if (err instanceof CompareError) throw err;
    throw new CompareError(`--compare ${ref}: could not prepare the worktree: ${err instanceof Error ? err.message : String(err)}`);
  }
  const seedChild = join(ROOT, 'bench', 'lib', 'seed-child.ts');
  const seed = <T>(job: Record<string, unknown>): Promise<T> => {
    if (!existsSync(join(root, 'bench/lib/seed.ts')) || !existsSync(join(root, 'bench/lib/backend.ts'))) {
      throw new CompareError(`--compare ${ref}: ${short} has no bench/lib/seed.ts and bench/lib/backend.ts to seed its data folders with`);
    }
    return runJsonScript<T>(root, seedChild, [root, JSON.stringify(job)], `seeding through ${short}`);
  };
  return {
    ref,
    commit,
    short,
    root,
    seedCatalogue: (dir, options, backend) => seed<string[]>({ backend, kind: 'catalogue', dir, options }),
    seedLarge: (dir, pid, size, backend) => seed<{ path: string; sha1: string }>({ backend, kind: 'large', dir, pid, size }),
    remove,
  };
}
