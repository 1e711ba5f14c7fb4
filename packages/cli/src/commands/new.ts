import { relative, resolve } from 'node:path';
import type * as Prompts from '@clack/prompts';
import { Command, InvalidArgumentError, Option } from 'commander';
import { generateAdapter, type GeneratedAdapter } from '../generator/adapter.js';
import { findMemberkitWorkspace, GeneratorError } from '../generator/files.js';
import { checkAdapterName, checkPackageName, defaultPackageName } from '../generator/names.js';
import {
  checkBaseURL,
  checkNodeIdentifier,
  defaultNodeIdentifier,
  generateNode,
  NODE_ADAPTER_BACKENDS,
  NODE_ADAPTERS,
  type GeneratedNode,
  type NodeAdapterChoice,
} from '../generator/node.js';

interface AdapterFlags {
  dir?: string;
  packageName?: string;
  scope?: string;
  yes?: boolean;
}

interface NodeFlags {
  adapter?: NodeAdapterChoice;
  identifier?: string;
  baseUrl?: string;
  yes?: boolean;
}

// The prompt library loads only when prompting (a fast --help and scripted runs).
let prompts: typeof Prompts;

/** Prompts only in a terminal, and never with --yes (scripts and CI pass flags). */
function interactive(flags: { yes?: boolean }): boolean {
  return process.stdin.isTTY === true && process.stdout.isTTY === true && flags.yes !== true;
}

function answered<T>(value: T): Exclude<T, symbol> {
  if (prompts.isCancel(value)) {
    prompts.cancel('Nothing was written.');
    process.exit(130);
  }
  return value as Exclude<T, symbol>;
}

const asValidator = (check: (v: string) => string | undefined) => (value: string | undefined) => check(value ?? '');

function validated(check: (v: string) => string | undefined) {
  return (value: string): string => {
    const error = check(value);
    if (error) throw new InvalidArgumentError(error);
    return value;
  };
}

/** Inside a memberkit checkout: adapters/<name> (covered by the workspaces); elsewhere ./memberkit-adapter-<name>. */
function defaultAdapterDir(name: string): string {
  const ws = findMemberkitWorkspace(process.cwd());
  return ws ? resolve(ws.root, 'adapters', name) : resolve(`memberkit-adapter-${name}`);
}

function display(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : rel;
}

export function adapterNextSteps(result: GeneratedAdapter): string {
  const dir = display(result.dir);
  const lines = [`Created ${result.packageName} in ${dir} (${result.files.length} files).`, '', 'Next steps:'];
  const ws = result.workspace;
  if (ws && !ws.covered) {
    lines.push(`  add "${ws.relativeDir}" to "workspaces" in ${display(resolve(ws.root, 'package.json'))}, then:`);
  }
  const step = (command: string, what: string) => `  ${command.padEnd(48)} ${what}`.trimEnd();
  if (ws) {
    const root = display(ws.root);
    lines.push(
      step(root === '.' ? 'npm install' : `(cd ${root} && npm install)`, 'link the new package into the workspace'),
      step(`npx tsc -b ${dir}`, 'build it'),
      step(`npm test -w ${result.packageName}`, 'the conformance suites (they pass as generated)'),
      step(`npm run serve -w ${result.packageName}`, 'a development node on it: http://localhost:8080/mn'),
    );
  } else {
    lines.push(
      step(`cd ${dir}`, ''),
      step('npm install', 'the published @memberkit packages'),
      step('npm run build', 'build it'),
      step('npm test', 'the conformance suites (they pass as generated)'),
      step('npm run serve', 'a development node on it: http://localhost:8080/mn'),
    );
  }
  lines.push(
    '',
    `Then replace the "YOUR BACKEND:" sections in ${dir}/src with your archive's code, keeping the tests green.`,
    `${dir}/README.md explains the contract, capabilities and errors; docs/write-an-adapter.md walks through it.`,
  );
  return lines.join('\n');
}

/** `offered(section, type)`: whether this CLI has the backend (backends/index.ts, loaded by the caller). */
export function nodeNextSteps(result: GeneratedNode, offered: (section: 'storage' | 'catalogue', type: string) => boolean): string {
  const dir = display(result.dir);
  const lines = [
    `Created node ${result.identifier} (${result.adapter}: ${NODE_ADAPTERS[result.adapter]}) in ${dir}.`,
    '',
    'Next steps:',
    `  edit ${dir}/memberkit.config.json (options: ${dir}/CONFIGURATION.md)`,
    `  ${dir}/start.sh  (serve it; then curl http://localhost:8080/mn/v2/node)`,
    `  ${dir}/README.md (systemd, Docker, health checks and logs)`,
  ];
  const backends = NODE_ADAPTER_BACKENDS[result.adapter];
  const missing = [offered('storage', backends.storage) ? undefined : `storage "${backends.storage}"`, offered('catalogue', backends.catalogue) ? undefined : `catalogue "${backends.catalogue}"`].filter((x) => x !== undefined);
  if (missing.length > 0) {
    lines.push('', `Note: this memberkit does not offer the ${missing.join(' and ')} backend yet; the configuration follows the adapter's options and will start once it does.`);
  }
  return lines.join('\n');
}

async function newAdapter(nameArg: string | undefined, flags: AdapterFlags): Promise<void> {
  const ask = interactive(flags);
  if (ask) prompts = await import('@clack/prompts');
  if (ask) prompts.intro('memberkit new adapter');
  let name = nameArg;
  if (name === undefined) {
    if (!ask) throw new GeneratorError('memberkit new adapter: the adapter name is required (e.g. memberkit new adapter my-archive)');
    name = answered(await prompts.text({ message: 'Adapter name (lower case, e.g. my-archive)', validate: asValidator(checkAdapterName) }));
  }
  const nameError = checkAdapterName(name);
  if (nameError) throw new GeneratorError(nameError);
  let packageName = flags.packageName ?? defaultPackageName(name, flags.scope);
  let dir = flags.dir ? resolve(flags.dir) : defaultAdapterDir(name);
  if (ask && flags.packageName === undefined) {
    packageName = answered(await prompts.text({ message: 'npm package name', initialValue: packageName, validate: asValidator(checkPackageName) }));
  }
  if (ask && flags.dir === undefined) {
    dir = resolve(answered(await prompts.text({ message: 'Folder', initialValue: display(dir), validate: (v) => ((v ?? '').trim() === '' ? 'a folder is needed' : undefined) })));
  }
  const result = generateAdapter({ name, packageName, dir });
  if (ask) prompts.outro('Done.');
  console.log(adapterNextSteps(result));
}

async function newNode(dirArg: string | undefined, flags: NodeFlags): Promise<void> {
  const ask = interactive(flags);
  if (ask) prompts = await import('@clack/prompts');
  if (ask) prompts.intro('memberkit new node');
  let dir = dirArg;
  if (dir === undefined) {
    if (!ask) throw new GeneratorError('memberkit new node: the folder is required (e.g. memberkit new node my-node --adapter fs)');
    dir = answered(await prompts.text({ message: 'Folder of the new node', placeholder: 'my-node', validate: (v) => ((v ?? '').trim() === '' ? 'a folder is needed' : undefined) }));
  }
  let adapter = flags.adapter ?? 'fs';
  if (ask && flags.adapter === undefined) {
    adapter = answered(
      await prompts.select<NodeAdapterChoice>({
        message: 'Where do object bytes and the catalogue live?',
        options: (Object.keys(NODE_ADAPTERS) as NodeAdapterChoice[]).map((value) => ({ value, label: value, hint: NODE_ADAPTERS[value] })),
        initialValue: 'fs',
      }),
    );
  }
  let identifier = flags.identifier ?? defaultNodeIdentifier(resolve(dir));
  if (ask && flags.identifier === undefined) {
    identifier = answered(await prompts.text({ message: 'Node identifier', initialValue: identifier, validate: asValidator(checkNodeIdentifier) }));
  }
  let baseURL = flags.baseUrl ?? 'http://localhost:8080/mn';
  if (ask && flags.baseUrl === undefined) {
    baseURL = answered(await prompts.text({ message: 'Public base URL', initialValue: baseURL, validate: asValidator(checkBaseURL) }));
  }
  const result = generateNode({ dir, adapter, identifier, baseURL });
  if (ask) prompts.outro('Done.');
  // The backend registry loads zod and its schemas: only here, not for every command.
  const { catalogueBackend, storageBackend } = await import('../backends/index.js');
  console.log(nodeNextSteps(result, (section, type) => (section === 'storage' ? storageBackend(type) : catalogueBackend(type)) !== undefined));
}

/** `memberkit new adapter <name>` and `memberkit new node <dir>`: start from the templates. */
export function registerNewCommand(program: Command): void {
  const cmd = program.command('new').description('start a new adapter package or a deployable node from the templates');

  cmd
    .command('adapter')
    .description('create an adapter package that builds and passes the conformance suites as generated')
    .argument('[name]', 'adapter name: lower case, digits and hyphens (my-archive)')
    .option('-d, --dir <folder>', 'where to create it (default: adapters/<name> in a memberkit checkout, else ./memberkit-adapter-<name>); must be absent or empty')
    .option('--package-name <name>', 'npm package name (default: [@scope/]memberkit-adapter-<name>)', validated(checkPackageName))
    .option('--scope <scope>', 'npm scope of the default package name (e.g. acme → @acme/memberkit-adapter-<name>)')
    .option('-y, --yes', 'no prompts: take flags and defaults')
    .action((name: string | undefined, flags: AdapterFlags) => newAdapter(name, flags));

  cmd
    .command('node')
    .description('create a deployable node folder: configuration, start script, systemd unit, Dockerfile, health check')
    .argument('[dir]', 'folder to create (absent or empty)')
    .addOption(new Option('-a, --adapter <adapter>', 'storage and catalogue').choices(Object.keys(NODE_ADAPTERS)))
    .option('--identifier <urn>', 'node identifier (default: urn:node:<FOLDER>)', validated(checkNodeIdentifier))
    .option('--base-url <url>', 'public base URL (default: http://localhost:8080/mn)', validated(checkBaseURL))
    .option('-y, --yes', 'no prompts: take flags and defaults')
    .action((dir: string | undefined, flags: NodeFlags) => newNode(dir, flags));
}
