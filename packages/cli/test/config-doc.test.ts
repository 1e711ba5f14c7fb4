// templates/node/CONFIGURATION.md is generated from the configuration schema: it documents
// every key `memberkit serve` accepts, and this test fails when the committed file differs
// (regenerate: TSX_TSCONFIG_PATH=tsconfig.dev.json node --conditions=@memberkit/source --import tsx scripts/configuration-doc.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { renderConfigurationDoc } from '../src/config-doc.js';

const FILE = join(import.meta.dirname, '..', '..', '..', 'templates', 'node', 'CONFIGURATION.md');

it('the committed CONFIGURATION.md is the one the schema generates', () => {
  expect(readFileSync(FILE, 'utf8'), 'run scripts/configuration-doc.ts and commit the result').toBe(renderConfigurationDoc());
});

it('documents keys of nested objects and of every backend, with their defaults', () => {
  const doc = renderConfigurationDoc();
  for (const row of [
    '| `auth.jwt.clockToleranceSeconds` | `60` |',
    '| `metrics.enabled` | `false` |',
    '| `storage.includeHidden` | `false` |',
    '| `storage.bucket` | **required** |',
    '| `catalogue.connectionEnv` | absent |',
    '| `node.identifier` | `urn:node:memberkitLocal` |',
  ]) expect(doc).toContain(row);
});
