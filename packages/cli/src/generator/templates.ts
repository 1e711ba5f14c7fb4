import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The folder holding `adapter/` and `node/`: in the memberkit repository, the repository's
 * `templates/` (this file is packages/cli/src/generator or .../dist/generator); in a
 * packed @memberkit/cli, `templates/` beside `dist/` (copied there by the package's
 * `prepack`). The repository's comes first, so that a leftover copy never shadows it.
 */
export function templatesDir(): string {
  const candidates = [resolve(import.meta.dirname, '..', '..', '..', '..', 'templates'), resolve(import.meta.dirname, '..', '..', 'templates')];
  for (const dir of candidates) if (existsSync(join(dir, 'adapter', 'package.json'))) return dir;
  throw new Error(`memberkit templates not found (looked in ${candidates.join(', ')})`);
}
