import { basename, join } from 'node:path';
import { checkTarget, GeneratorError, listTemplateFiles, readText, writeFiles } from './files.js';
import { findRelease, releaseLockfile, releaseSpecs, type Release } from './release.js';
import { templatesDir } from './templates.js';
import { nodeIdentifierProblem } from '../config-schema.js';

/** Storage/catalogue combinations `memberkit new node --adapter` offers. */
export const NODE_ADAPTERS = {
  fs: 'files + SQLite on this machine (works everywhere; the embedded default)',
  s3: 'object bytes in an S3 bucket, catalogue in SQLite (@memberkit/adapter-s3)',
  sql: 'files on this machine, catalogue in PostgreSQL/MySQL (@memberkit/adapter-sql)',
} as const;
export type NodeAdapterChoice = keyof typeof NODE_ADAPTERS;

/** The backend `type`s each choice needs from `memberkit serve`. */
export const NODE_ADAPTER_BACKENDS: Record<NodeAdapterChoice, { storage: string; catalogue: string }> = {
  fs: { storage: 'filesystem', catalogue: 'sqlite' },
  s3: { storage: 's3', catalogue: 'sqlite' },
  sql: { storage: 'filesystem', catalogue: 'sql' },
};

export interface GenerateNodeOptions {
  dir: string;
  adapter: NodeAdapterChoice;
  /** node.identifier; default `urn:node:` + the folder's name in upper case. */
  identifier?: string;
  /** node.baseURL; default `http://localhost:8080/mn`. */
  baseURL?: string;
  templates?: string;
  /** Where `npm ci` in the node gets memberkit (default: findRelease()). */
  release?: Release;
}

export interface GeneratedNode {
  dir: string;
  adapter: NodeAdapterChoice;
  identifier: string;
  files: string[];
}

/** `urn:node:` and the folder name, upper case, letters, digits and `_` only, at most 16 (the CN's rule). */
export function defaultNodeIdentifier(dir: string): string {
  const stem = basename(dir).toUpperCase().replace(/[^A-Z0-9_]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 16).replace(/_+$/, '');
  return `urn:node:${stem.length >= 2 ? stem : 'MYNODE'}`;
}

/** A generated node registers with the production Coordinating Node: its identifier must pass the CN's rule. */
export function checkNodeIdentifier(id: string): string | undefined {
  return nodeIdentifierProblem(id);
}

export function checkBaseURL(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'the base URL must be http: or https:';
    if (u.search || u.hash) return 'the base URL has no query or fragment';
    return undefined;
  } catch {
    return `"${url}" is not a URL (e.g. https://data.example.org/mn)`;
  }
}

/**
 * Copy templates/node to `dir` with the configuration of the chosen adapters
 * (`variants/<adapter>.memberkit.config.json` for s3 and sql), the node's identifier and
 * base URL filled in, and the server's basePath taken from the base URL.
 */
export function generateNode(options: GenerateNodeOptions): GeneratedNode {
  if (!(options.adapter in NODE_ADAPTERS)) throw new GeneratorError(`unknown --adapter "${options.adapter}": choose ${Object.keys(NODE_ADAPTERS).join(', ')}`);
  const dir = checkTarget(options.dir);
  const identifier = options.identifier ?? defaultNodeIdentifier(dir);
  const idError = checkNodeIdentifier(identifier);
  if (idError) throw new GeneratorError(idError);
  const baseURL = (options.baseURL ?? 'http://localhost:8080/mn').replace(/\/+$/, '');
  const urlError = checkBaseURL(baseURL);
  if (urlError) throw new GeneratorError(urlError);

  const source = join(options.templates ?? templatesDir(), 'node');
  const files = new Map<string, string>();
  const modes = new Map<string, number>();
  for (const rel of listTemplateFiles(source, (r) => r === 'variants' || r.startsWith('variants/'))) {
    files.set(rel, readText(source, rel));
    if (rel.endsWith('.sh')) modes.set(rel, 0o755);
  }
  const configText = options.adapter === 'fs' ? readText(source, 'memberkit.config.json') : readText(source, `variants/${options.adapter}.memberkit.config.json`);
  const config = JSON.parse(configText) as { node: Record<string, unknown>; server: Record<string, unknown> };
  const stem = identifier.slice('urn:node:'.length);
  config.node.identifier = identifier;
  config.node.subject = `CN=${identifier},DC=dataone,DC=org`;
  config.node.name = `${stem} Member Node`;
  config.node.baseURL = baseURL;
  config.server.basePath = new URL(baseURL).pathname.replace(/\/+$/, '');
  files.set('memberkit.config.json', JSON.stringify(config, null, 2) + '\n');
  const release = options.release ?? findRelease();
  const pkg = nodePackageJson(readText(source, 'package.json'), stem, release, dir);
  files.set('package.json', JSON.stringify(pkg, null, 2) + '\n');
  files.set('package-lock.json', JSON.stringify(releaseLockfile(release, dir, pkg), null, 2) + '\n');
  writeFiles(dir, files, modes);
  return { dir, adapter: options.adapter, identifier, files: [...files.keys()].sort() };
}

/**
 * The node's package.json: `npm ci` installs the memberkit command (node_modules/.bin,
 * which start.sh uses first) from the release's tarballs; `overrides` pin every
 * @memberkit package to its tarball, so no @memberkit name is ever asked of a registry.
 */
function nodePackageJson(text: string, stem: string, release: Release, dir: string) {
  const pkg = JSON.parse(text) as { name: string; version: string; dependencies: Record<string, string>; overrides?: Record<string, string> };
  const specs = releaseSpecs(release, dir);
  pkg.name = `${stem.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || 'memberkit'}-node`;
  pkg.dependencies = { '@memberkit/cli': specs['@memberkit/cli']! };
  pkg.overrides = specs;
  return pkg;
}
