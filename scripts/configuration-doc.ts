// Writes templates/node/CONFIGURATION.md from the configuration schema (and the CLI's
// backends), so the reference cannot drift from what `memberkit serve` accepts.
//   TSX_TSCONFIG_PATH=tsconfig.dev.json node --conditions=@memberkit/source --import tsx scripts/configuration-doc.ts [--check]
// --check exits non-zero when the committed file differs (packages/cli/test/config-doc.test.ts does the same).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderConfigurationDoc } from '../packages/cli/src/config-doc.js';

const file = join(import.meta.dirname, '..', 'templates', 'node', 'CONFIGURATION.md');
const text = renderConfigurationDoc();
if (process.argv.includes('--check')) {
  if (readFileSync(file, 'utf8') !== text) {
    console.error(`${file} is out of date: run scripts/configuration-doc.ts`);
    process.exitCode = 1;
  }
} else {
  writeFileSync(file, text);
  console.log(`wrote ${file}`);
}
