import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** Thrown for anything the user can fix (a bad name, an existing folder): printed without a stack. */
export class GeneratorError extends Error {
  override readonly name = 'GeneratorError';
}

/** Never copied from a template: build output, dependencies, caches, local state. */
const SKIP = new Set(['node_modules', 'dist', '.turbo', '.vitest', '.memberkit-dev', 'coverage', 'data']);

/** Relative POSIX paths of the files under `root`, minus build output and caches. */
export function listTemplateFiles(root: string, skip: (rel: string) => boolean = () => false): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (SKIP.has(entry.name) || entry.name.endsWith('.tsbuildinfo') || entry.name.startsWith('.generated-')) continue;
      const abs = join(dir, entry.name);
      const rel = relative(root, abs).split(sep).join('/');
      if (skip(rel)) continue;
      if (entry.isDirectory()) walk(abs);
      else if (entry.isFile()) out.push(rel);
    }
  };
  walk(root);
  return out;
}

/**
 * The target folder MUST be absent or empty: the generator never overwrites anything.
 * Returns the absolute path.
 */
export function checkTarget(dir: string): string {
  const abs = resolve(dir);
  if (existsSync(abs)) {
    if (!statSync(abs).isDirectory()) throw new GeneratorError(`${abs} exists and is not a folder; choose another --dir`);
    if (readdirSync(abs).length > 0) throw new GeneratorError(`${abs} exists and is not empty; memberkit never overwrites files. Choose another --dir or remove it first`);
  }
  return abs;
}

/** Write files (relative path -> content) under `root`, refusing to replace any existing file. */
export function writeFiles(root: string, files: ReadonlyMap<string, string>, modes: ReadonlyMap<string, number> = new Map()): void {
  mkdirSync(root, { recursive: true });
  for (const [rel, content] of files) {
    const abs = join(root, ...rel.split('/'));
    mkdirSync(dirname(abs), { recursive: true });
    // 'wx': fail rather than overwrite, even if something appeared since checkTarget.
    writeFileSync(abs, content, { flag: 'wx', mode: modes.get(rel) ?? 0o644 });
  }
}

export function readText(root: string, rel: string): string {
  return readFileSync(join(root, ...rel.split('/')), 'utf8');
}

/**
 * The memberkit repository containing `dir` (its root package.json is named `memberkit`
 * and has workspaces), or undefined.
 */
export function findMemberkitWorkspace(dir: string): { root: string; workspaces: string[] } | undefined {
  let current = resolve(dir);
  for (;;) {
    const pkg = join(current, 'package.json');
    if (existsSync(pkg)) {
      try {
        const json = JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string; workspaces?: unknown };
        if (json.name === 'memberkit' && Array.isArray(json.workspaces)) return { root: current, workspaces: json.workspaces.filter((w): w is string => typeof w === 'string') };
      } catch {
        // not JSON: keep looking upwards
      }
    }
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** Whether `rel` (POSIX, relative to the workspace root) is matched by a workspaces entry (`dir/*` or an exact path). */
export function coveredByWorkspaces(rel: string, workspaces: readonly string[]): boolean {
  return workspaces.some((w) => {
    const pattern = w.replace(/\/$/, '');
    if (pattern.endsWith('/*')) {
      const base = pattern.slice(0, -2);
      const rest = rel.startsWith(base + '/') ? rel.slice(base.length + 1) : undefined;
      return rest !== undefined && rest !== '' && !rest.includes('/') && !rest.startsWith('.');
    }
    return pattern === rel;
  });
}
