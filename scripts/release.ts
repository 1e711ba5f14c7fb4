// npm run release: build every package (tsc -b) and write an installable tarball of each
// public workspace package into release/, with a package.json that pins every @memberkit
// package to its tarball (`overrides`), so that installing from the folder never asks a
// registry for an @memberkit name. See release/README.md (written below) for the commands.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { withRegistryUrls, type Lockfile } from '../packages/cli/src/generator/lockfile.js';
import { join } from 'node:path';
import { publicWorkspaces, readRelease, RELEASE_LOCK_FILE, RELEASE_ORIGIN_FILE, releaseLockfile, releasePackageJson, tarballName } from '../packages/cli/src/generator/release.js';

const root = join(import.meta.dirname, '..');
const out = join(root, 'release');
const packages = publicWorkspaces(root);
const cli = packages.find((p) => p.name === '@memberkit/cli');
if (!cli) throw new Error('no @memberkit/cli workspace');

const step = (what: string): void => void process.stderr.write(`release: ${what}\n`);
const run = (command: string, args: string[]): string => execFileSync(command, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

step('tsc -b (every package to dist/)');
try {
  execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-b', 'tsconfig.json'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
} catch {
  console.error('release: the build failed (tsc -b above); nothing was released');
  process.exit(1);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// A CLI installed from this release finds the other tarballs here (memberkit new adapter|node).
writeFileSync(join(root, cli.dir, 'dist', RELEASE_ORIGIN_FILE), JSON.stringify({ dir: out }) + '\n');

step(`npm pack ${packages.map((p) => p.name).join(' ')}`);
run('npm', ['pack', '--silent', '--pack-destination', out, ...packages.flatMap((p) => ['--workspace', p.dir])]);

// better-sqlite3's native addon as compiled by this checkout's install, as a local prebuild:
// a consumer on the same platform and Node ABI that sets
// npm_config_better_sqlite3_local_prebuilds=<release>/prebuilds installs without a compiler
// or a download (prebuild-install looks there first; elsewhere it downloads or compiles).
const sqlite = JSON.parse(readFileSync(join(root, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as { version: string };
const prebuild = `better-sqlite3-v${sqlite.version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
mkdirSync(join(out, 'prebuilds'));
run('tar', ['-czf', join(out, 'prebuilds', prebuild), '-C', join(root, 'node_modules', 'better-sqlite3'), 'build/Release/better_sqlite3.node']);

const tarballs: Record<string, string> = {};
for (const p of packages) {
  const file = tarballName(p.name, p.version);
  if (!existsSync(join(out, file))) throw new Error(`npm pack did not write ${file}`);
  tarballs[p.name] = file;
}
const releasePkg = releasePackageJson(cli.version, tarballs);
writeFileSync(join(out, 'package.json'), JSON.stringify(releasePkg, null, 2) + '\n');
// The repository's lockfile, with the tarball URLs npm reads from its cache (see withRegistryUrls).
const registry = process.env.npm_config_registry || run('npm', ['config', 'get', 'registry']).trim();
const repoLock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as Lockfile;
writeFileSync(join(out, RELEASE_LOCK_FILE), JSON.stringify(withRegistryUrls(repoLock, registry), null, 2) + '\n');
// The release folder's own lockfile: `npm ci --omit=dev` there installs the CLI offline.
const release = readRelease(out)!;
writeFileSync(join(out, 'package-lock.json'), JSON.stringify(releaseLockfile(release, out, releasePkg), null, 2) + '\n');
writeFileSync(
  join(out, 'README.md'),
  `# memberkit ${cli.version} release

Written by \`npm run release\` in the memberkit checkout: one tarball per public package and a
package.json that pins every @memberkit package to its tarball (\`overrides\`). Nothing here
needs an @memberkit package from a registry (third-party dependencies come from the npm
registry, or from npm's cache with \`--offline\`).

- The \`memberkit\` command: \`npm ci --omit=dev\` in this folder (add \`--offline\` where npm's
  cache holds the repository's install), then
  \`node_modules/.bin/memberkit --help\` (or put \`$PWD/node_modules/.bin\` on the PATH).
- Native code: \`prebuilds/${prebuild}\` is better-sqlite3 as built for this platform;
  \`export npm_config_better_sqlite3_local_prebuilds=${join(out, 'prebuilds')}\` before installing
  uses it instead of downloading or compiling one.
- A node made by \`memberkit new node DIR\`: its package.json already points here; \`npm install\`
  in DIR, then \`./start.sh\`.
- An adapter made by \`memberkit new adapter NAME\` outside the checkout: its package.json
  points here too; \`npm install && npm run build && npm test\`.
- Elsewhere: set \`MEMBERKIT_RELEASE=${out}\` before \`memberkit new ...\`.

${packages.map((p) => `- \`${tarballs[p.name]}\` ${p.name} (${p.dir})`).join('\n')}
`,
);
step(`${packages.length} packages in ${out}`);
console.log(out);
