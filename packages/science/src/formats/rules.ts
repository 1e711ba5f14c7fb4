/**
 * An archive's own format rules (wrap.formatOverrides, wrap.extraFormats): overrides by glob
 * or by extension before identification by content, and the extra formatIds beyond the
 * federation's list that may be published. Every override must name a publishable format.
 */
import { compileGlob, isGlob, type CompiledGlob } from './glob.js';
import { detectFormat, type FormatIdentification, type IdentifyInput } from './identify.js';
import { DECISIVE_EXTENSIONS, extensionOf, formatOfExtension, listedFormat } from './federation-list.js';

export interface FormatRulesOptions {
  /**
   * Pattern → formatId. A key holding `/`, `*`, `?`, `[` or `{` is a glob over the relative
   * path (`**\/*.eml.xml`, `data/**`; without `/` it matches the file name at any depth);
   * any other key is a file extension without the dot (`xml`, `eml.xml`). Globs apply in
   * the order given, before extensions (longest first).
   */
  overrides?: Readonly<Record<string, string>>;
  /** formatIds outside the federation's list that may be published. */
  extraFormats?: readonly string[];
}

/** What is wrong with the rules, one message per problem naming the key (empty when fine). */
export function formatRulesProblems(options: FormatRulesOptions, where = 'wrap'): string[] {
  return compile(options, where).problems;
}

export class FormatRulesError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'FormatRulesError';
  }
}

interface Compiled {
  globs: Array<{ glob: CompiledGlob; formatId: string }>;
  extensions: Array<{ suffix: string; formatId: string; key: string }>;
  extras: Set<string>;
  problems: string[];
}

function compile(options: FormatRulesOptions, where: string): Compiled {
  const problems: string[] = [];
  const extras = new Set<string>();
  for (const [k, id] of (options.extraFormats ?? []).entries()) {
    if (typeof id !== 'string' || id.trim() === '' || id !== id.trim()) problems.push(`${where}.extraFormats[${k}] must be a non-empty formatId without surrounding spaces`);
    else extras.add(id);
  }
  const globs: Compiled['globs'] = [];
  const extensions: Compiled['extensions'] = [];
  for (const [key, formatId] of Object.entries(options.overrides ?? {})) {
    const label = `${where}.formatOverrides[${JSON.stringify(key)}]`;
    if (listedFormat(formatId) === undefined && !extras.has(formatId)) {
      problems.push(`${label}: ${JSON.stringify(formatId)} is not a formatId of the federation's list; use one of the list (GET /v2/formats) or name it in ${where}.extraFormats`);
      continue;
    }
    if (isGlob(key)) {
      try {
        globs.push({ glob: compileGlob(key), formatId });
      } catch (e) {
        problems.push(`${label}: ${(e as Error).message}`);
      }
    } else {
      const suffix = key.replace(/^\.+/, '').toLowerCase();
      if (suffix === '' || /\s/.test(suffix)) problems.push(`${label}: an extension must be a word like "xml" or "eml.xml"`);
      else extensions.push({ suffix: `.${suffix}`, formatId, key });
    }
  }
  extensions.sort((a, b) => b.suffix.length - a.suffix.length);
  return { globs, extensions, extras, problems };
}

/** Compiled rules; construction throws FormatRulesError naming every bad override. */
export class FormatRules {
  private readonly compiled: Compiled;

  constructor(options: FormatRulesOptions = {}, where = 'wrap') {
    this.compiled = compile(options, where);
    if (this.compiled.problems.length > 0) throw new FormatRulesError(this.compiled.problems);
  }

  get extraFormats(): ReadonlySet<string> {
    return this.compiled.extras;
  }

  /** True for formatIds of the list and the configured extras. */
  isPublishable(formatId: string): boolean {
    return listedFormat(formatId) !== undefined || this.compiled.extras.has(formatId);
  }

  /** The override of a relative path, with the rule that gave it. */
  overrideFor(relativePath: string): { formatId: string; rule: string } | undefined {
    for (const { glob, formatId } of this.compiled.globs) if (glob.test(relativePath)) return { formatId, rule: glob.pattern };
    const name = relativePath.slice(relativePath.lastIndexOf('/') + 1).toLowerCase();
    for (const { suffix, formatId, key } of this.compiled.extensions) if (name.endsWith(suffix) && name.length > suffix.length) return { formatId, rule: key };
    return undefined;
  }

  /** True when some override may apply without looking at the content. */
  get hasOverrides(): boolean {
    return this.compiled.globs.length + this.compiled.extensions.length > 0;
  }

  /**
   * False when the file's format is decided without its bytes: an override of the list, or an
   * extension that names the format (DECISIVE_EXTENSIONS: `.csv`, `.pdf`...). Scanners read
   * the first bytes only of the others (`.xml`, `.json`, `.rdf`, `.nc`, no extension...).
   */
  needsContent(relativePath: string): boolean {
    const override = this.overrideFor(relativePath);
    if (override !== undefined) return listedFormat(override.formatId) === undefined;
    const ext = extensionOf(relativePath);
    return !(DECISIVE_EXTENSIONS.has(ext) && formatOfExtension(ext) !== undefined);
  }

  /** The format of the file at `path` (relative, POSIX): its override, else by content. */
  identify(path: string, input: Omit<IdentifyInput, 'name'> & { name?: string }): FormatIdentification {
    const override = this.overrideFor(path);
    const listed = override ? listedFormat(override.formatId) : undefined;
    if (override && listed) return { formatId: override.formatId, mediaType: listed.mediaType, by: 'override', reason: `override ${JSON.stringify(override.rule)}` };
    const detected = detectFormat({ ...input, name: input.name ?? path }, { extraFormats: this.compiled.extras });
    if (!override) return detected;
    const mediaType = listedFormat(override.formatId)?.mediaType ?? (detected.formatId === override.formatId ? detected.mediaType : 'application/octet-stream');
    return { formatId: override.formatId, mediaType, by: 'override', reason: `override ${JSON.stringify(override.rule)}` };
  }
}
