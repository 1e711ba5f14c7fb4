import { join, relative, sep } from 'node:path';
import { checkTarget, coveredByWorkspaces, findMemberkitWorkspace, GeneratorError, listTemplateFiles, readText, writeFiles } from './files.js';
import { checkAdapterName, checkPackageName, pascalCase } from './names.js';
import { findRelease, releaseLockfile, releaseSpecs, type Release } from './release.js';
import { templatesDir } from './templates.js';

export interface GenerateAdapterOptions {
  /** The adapter name: `my-archive` (see checkAdapterName). */
  name: string;
  /** npm package name, e.g. `@acme/memberkit-adapter-my-archive`. */
  packageName: string;
  /** Target folder: absent or empty. */
  dir: string;
  /** Template folder (default: the templates shipped with the CLI). */
  templates?: string;
  /** Outside a memberkit repository: where the @memberkit packages come from (default: findRelease()). */
  release?: Release;
}

export interface GeneratedAdapter {
  dir: string;
  packageName: string;
  /** Class-name stem: `MyArchive` (MyArchiveStorageAdapter, createMyArchiveStorage...). */
  pascal: string;
  files: string[];
  /** Inside a memberkit repository: its root, and whether its workspaces cover `dir`. */
  workspace?: { root: string; covered: boolean; relativeDir: string };
}

/** The .gitignore of a generated package (npm drops .gitignore files from published packages, so it is written, not copied). */
const GITIGNORE = '# Build output, dependencies, and the development node\'s event log (npm run serve).\nnode_modules/\ndist/\n.memberkit-dev/\n';

/** Settings the template gets from the repository's tsconfig.base.json, for a package outside it. */
const STANDALONE_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    esModuleInterop: true,
    skipLibCheck: true,
    declaration: true,
    declarationMap: true,
    sourceMap: true,
    isolatedModules: true,
    verbatimModuleSyntax: true,
    types: ['node'],
    rootDir: 'src',
    outDir: 'dist',
  },
  include: ['src'],
};

/**
 * Copy templates/adapter to `dir`, renamed: the package name, `adapter-template` (titles,
 * node ids) and the `Template` stem of every identifier (TemplateStorageAdapter,
 * createTemplateCatalogue...). Inside a memberkit repository the package is wired to the
 * workspace (tsconfig extends the repository's base and references @memberkit/types; tests
 * read the sibling packages' sources); elsewhere it stands alone on the published packages.
 */
export function generateAdapter(options: GenerateAdapterOptions): GeneratedAdapter {
  const nameError = checkAdapterName(options.name);
  if (nameError) throw new GeneratorError(nameError);
  const packageError = checkPackageName(options.packageName);
  if (packageError) throw new GeneratorError(`invalid package name "${options.packageName}": ${packageError}`);
  const dir = checkTarget(options.dir);
  const source = join(options.templates ?? templatesDir(), 'adapter');
  const pascal = pascalCase(options.name);

  const ws = findMemberkitWorkspace(join(dir, '..'));
  const workspace = ws && {
    root: ws.root,
    relativeDir: relative(ws.root, dir).split(sep).join('/'),
    covered: coveredByWorkspaces(relative(ws.root, dir).split(sep).join('/'), ws.workspaces),
  };
  /** `../../` in the template (templates/adapter → repository root) becomes the real way up. */
  const toRoot = ws ? (relative(dir, ws.root).split(sep).join('/') || '.') + '/' : undefined;

  const rename = (text: string): string =>
    text
      .replaceAll('@memberkit/adapter-template', options.packageName)
      .replaceAll('adapter-template', options.name)
      .replace(/Template(?=[A-Z])/g, pascal);

  const release = toRoot ? undefined : (options.release ?? findRelease());
  const files = new Map<string, string>();
  for (const rel of listTemplateFiles(source, (r) => r === '.gitignore')) {
    let text = rename(readText(source, rel));
    if (rel === 'package.json') {
      text = packageJson(text, options, toRoot, release && releaseSpecs(release, dir));
      if (release) files.set('package-lock.json', JSON.stringify(releaseLockfile(release, dir, JSON.parse(text)), null, 2) + '\n');
    }
    else if (rel === 'tsconfig.json') text = toRoot ? text.replaceAll('../../', toRoot) : JSON.stringify(STANDALONE_TSCONFIG, null, 2) + '\n';
    else if (rel === 'vitest.config.ts' && !toRoot) text = standaloneVitestConfig(text);
    files.set(rel, text);
  }
  files.set('.gitignore', GITIGNORE);
  writeFiles(dir, files);
  return { dir, packageName: options.packageName, pascal, files: [...files.keys()].sort(), ...(workspace ? { workspace } : {}) };
}

function packageJson(text: string, options: GenerateAdapterOptions, toRoot: string | undefined, releaseSpecs: Record<string, string> | undefined): string {
  const pkg = JSON.parse(text) as Record<string, unknown> & { scripts: Record<string, string>; dependencies?: Record<string, string>; devDependencies: Record<string, string> };
  delete pkg.private;
  pkg.version = '0.1.0';
  pkg.description = `memberkit adapter: ${options.name} (storage and catalogue of a DataONE Member Node)`;
  if (toRoot) {
    pkg.scripts.serve = pkg.scripts.serve!.replaceAll('../../', toRoot);
  } else {
    // Released packages: their dist is plain JavaScript, so no source condition and no
    // decorator settings are needed to run the development node.
    pkg.scripts.serve = 'exec node --import tsx dev/serve.ts';
  }
  if (releaseSpecs) {
    // Every @memberkit package from the release's tarballs (the scope is not published: a
    // registry range would install whatever someone else put under the name).
    for (const deps of [pkg.dependencies, pkg.devDependencies]) {
      for (const name of Object.keys(deps ?? {})) if (releaseSpecs[name]) deps![name] = releaseSpecs[name];
    }
    pkg.overrides = releaseSpecs;
  }
  // Keys in a stable, conventional order.
  const order = ['name', 'version', 'description', 'type', 'license', 'engines', 'exports', 'files', 'scripts', 'dependencies', 'devDependencies', 'overrides'];
  const sorted = Object.fromEntries([...order.filter((k) => k in pkg).map((k) => [k, pkg[k]]), ...Object.entries(pkg).filter(([k]) => !order.includes(k))]);
  return JSON.stringify(sorted, null, 2) + '\n';
}

function standaloneVitestConfig(text: string): string {
  return text
    .split('\n')
    .filter((line) => !line.includes("conditions: ['@memberkit/source']"))
    .join('\n');
}
