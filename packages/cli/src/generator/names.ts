/**
 * Names of generated packages: the adapter name the author types, the npm package name,
 * and the identifiers derived from it.
 */

/** Names that would shadow memberkit's own packages or read badly in class names. */
const RESERVED = new Set(['template', 'core', 'types', 'testkit', 'cli', 'client', 'node', 'memberkit', 'adapter', 'test']);

/**
 * An adapter name: lower-case letters, digits and single hyphens, starting with a letter
 * (so that `my-archive` gives `MyArchiveStorageAdapter`), at most 40 characters.
 * Returns an error message, or undefined when the name is valid.
 */
export function checkAdapterName(name: string): string | undefined {
  if (name === '') return 'the adapter name is empty';
  if (name.length > 40) return 'the adapter name is longer than 40 characters';
  if (!/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(name)) {
    return `"${name}" is not a valid adapter name: use lower-case letters, digits and single hyphens, starting with a letter (e.g. my-archive)`;
  }
  if (RESERVED.has(name)) return `"${name}" is reserved; choose a name that says what the backend is (e.g. my-archive, irods, dspace)`;
  return undefined;
}

/**
 * npm's rules for a package name (validate-npm-package-name, for new packages): at most
 * 214 characters, lower case, URL-safe, optionally scoped, not starting with `.` or `_`.
 */
export function checkPackageName(name: string): string | undefined {
  if (name === '') return 'the package name is empty';
  if (name.length > 214) return 'a package name has at most 214 characters';
  if (name !== name.trim()) return 'a package name has no leading or trailing spaces';
  if (name !== name.toLowerCase()) return 'a package name is lower case';
  const m = /^(?:@([^/]+)\/)?([^/]+)$/.exec(name);
  if (!m) return `"${name}" is not a package name (name, or @scope/name)`;
  for (const part of [m[1], m[2]]) {
    if (part === undefined) continue;
    if (part.startsWith('.') || part.startsWith('_')) return 'a package name (or scope) does not start with . or _';
    if (!/^[a-z0-9][a-z0-9._~-]*$/.test(part)) return `"${name}" has characters npm does not allow (use a-z, 0-9, - . _ ~)`;
    if (part === 'node_modules' || part === 'favicon.ico') return `"${part}" is not allowed as a package name`;
  }
  return undefined;
}

/** `@scope/memberkit-adapter-<name>`, or `memberkit-adapter-<name>` without a scope. */
export function defaultPackageName(name: string, scope?: string): string {
  const bare = `memberkit-adapter-${name}`;
  if (scope === undefined || scope === '') return bare;
  return `@${scope.replace(/^@/, '').replace(/\/$/, '')}/${bare}`;
}

/** `my-archive` → `MyArchive` (class names: MyArchiveStorageAdapter, createMyArchiveStorage). */
export function pascalCase(name: string): string {
  return name
    .split('-')
    .filter((p) => p !== '')
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('');
}
