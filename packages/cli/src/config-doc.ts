import { z } from 'zod';
import { BUILT_IN_BACKENDS } from './backends/index.js';
import { configSchema, type KeyDoc } from './config-schema.js';

/**
 * templates/node/CONFIGURATION.md, written from the schema: every key the schema accepts, its
 * default (computed, or the key's `shownDefault`) and its description. Regenerate with
 * `node --import tsx scripts/configuration-doc.ts`; a test fails when the committed file differs.
 */

type AnySchema = z.core.$ZodType;

interface Key {
  doc?: KeyDoc;
  inner: AnySchema;
  hasDefault: boolean;
  defaultValue?: unknown;
  optional: boolean;
}

/** Look through the wrappers (default, prefault, optional, pipe) of one key. */
function describeKey(schema: AnySchema): Key {
  const key: Key = { inner: schema, hasDefault: false, optional: false };
  let s: AnySchema | undefined = schema;
  for (let i = 0; s && i < 10; i++) {
    key.doc ??= z.globalRegistry.get(s) as KeyDoc | undefined;
    const def = s._zod.def as unknown as { type: string; innerType?: AnySchema; in?: AnySchema; defaultValue?: unknown };
    key.inner = s;
    if (def.type === 'default') {
      key.hasDefault = true;
      key.defaultValue = def.defaultValue;
    } else if (def.type === 'optional') key.optional = true;
    else if (def.type !== 'prefault' && def.type !== 'pipe') break;
    s = def.innerType ?? def.in;
  }
  return key;
}

function shapeOf(key: Key): Record<string, AnySchema> | undefined {
  const def = key.inner._zod.def as unknown as { type: string; shape?: Record<string, AnySchema> };
  return def.type === 'object' ? def.shape : undefined;
}

function shownDefault(key: Key): string {
  if (key.doc?.shownDefault !== undefined) return key.doc.shownDefault;
  if (key.hasDefault) {
    const v = key.defaultValue;
    return typeof v === 'string' ? (v === '' ? '`""`' : `\`${v}\``) : `\`${JSON.stringify(v)}\``;
  }
  if (key.optional) return 'absent';
  return shapeOf(key) ? 'the keys below' : '**required**';
}

function meaning(path: string, key: Key): string {
  if (!key.doc?.description) throw new Error(`config-schema: ${path} has no description (wrap it in doc(schema, "what it means"))`);
  const def = key.inner._zod.def as unknown as { type: string; entries?: Record<string, string> };
  const values = def.type === 'enum' && def.entries ? Object.values(def.entries) : undefined;
  return key.doc.description + (values ? ` One of ${values.map((v) => `\`${v}\``).join(', ')}.` : '');
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

const row = (path: string, key: Key) => `| \`${path}\` | ${cell(shownDefault(key))} | ${cell(meaning(path, key))} |`;

/** Table rows of an object's keys, depth first: an object key gets a row, then its keys. */
function rows(prefix: string, shape: Record<string, AnySchema>): string[] {
  const out: string[] = [];
  for (const [name, schema] of Object.entries(shape)) {
    const path = `${prefix}.${name}`;
    const key = describeKey(schema);
    const children = key.doc?.leaf ? undefined : shapeOf(key);
    out.push(row(path, key));
    if (children) out.push(...rows(path, children));
  }
  return out;
}

const TABLE_HEAD = ['| option | default | meaning |', '|---|---|---|'];

function backendTables(section: 'storage' | 'catalogue', backends: ReadonlyArray<{ type: string; description: string; options: AnySchema }>): string[] {
  const out: string[] = [];
  for (const b of backends) {
    const shape = describeKey(b.options);
    out.push('', `### \`"type": "${b.type}"\`: ${b.description}`, '');
    const keys = shapeOf(shape);
    if (!keys || Object.keys(keys).length === 0) out.push('No other options.');
    else out.push(...TABLE_HEAD, ...rows(section, keys));
  }
  return out;
}

/** Text the schema cannot hold: the page's introduction and sections beyond the file. */
const INTRO = `# memberkit.config.json: every option

<!-- Generated from packages/cli/src/config-schema.ts and adapters/*/src/backends.ts by
     scripts/configuration-doc.ts; edit the descriptions there, not here. -->

\`memberkit serve <folder>\` reads \`<folder>/memberkit.config.json\` (or \`--config file\`);
\`memberkit init <folder>\` writes a first one. JSON has no comments, so this page documents
each option. Every option has a default except where marked **required**; paths are relative
to the configuration file's folder. A mistake stops the node at start with one line per
problem naming the key: an unknown key names the nearest valid one
(\`unknown key acess — did you mean access?\`), a wrong value says what is expected
(\`server.port: Invalid input: expected number, received string\`), invalid JSON gives the line
and column.`;

const SECTION_EXTRA: Record<string, string> = {
  metrics: `A Prometheus scrape configuration for it:

\`\`\`yaml
scrape_configs:
  - job_name: memberkit
    static_configs:
      - targets: ['mn.example.org:9464']   # metrics.host must then be reachable: 0.0.0.0 or the host's address
\`\`\`

The families: \`memberkit_http_requests_total\` (by DataONE \`operation\` and \`status\`),
\`memberkit_http_request_duration_seconds\` (histogram, by \`operation\`),
\`memberkit_http_request_bytes_total\` and \`memberkit_http_response_bytes_total\`,
\`memberkit_catalogue_objects\`, \`memberkit_jobs\` (by \`state\`), \`memberkit_scan_running\`,
\`memberkit_scan_files\` (by \`result\`), \`memberkit_scans_total\` (by \`outcome\`),
\`memberkit_scan_last_duration_seconds\`, and the process and Node.js defaults of prom-client.`,
};

const ENVIRONMENT = `## Environment (not in this file)

| variable | default | meaning |
|---|---|---|
| \`MEMBERKIT_LOG_LEVEL\` | \`info\` | Log level when \`log.level\` is not set. |
| \`UV_THREADPOOL_SIZE\` | \`16\` (set by \`memberkit\`) | Threads for file operations (open, read, fsync, rename). Raise it for many concurrent uploads to slow disks; the value in the environment wins. |
| \`PGPASSWORD\`, \`AWS_*\`... | | Credentials of the drivers, read by them as usual. |`;

export function renderConfigurationDoc(): string {
  const out: string[] = [INTRO];
  for (const [section, schema] of Object.entries(configSchema.shape)) {
    const key = describeKey(schema);
    const shape = shapeOf(key);
    // A top-level key that is not a section (`adapters`): one row under its own heading.
    if (!shape) {
      out.push('', `## \`${section}\``, '', ...TABLE_HEAD, row(section, key));
      continue;
    }
    const about = key.doc?.description ?? '';
    const cut = about.indexOf('. ');
    const title = cut < 0 ? about : about.slice(0, cut);
    out.push('', `## \`${section}\`: ${title}`);
    if (cut >= 0) out.push('', about.slice(cut + 2).replace(/\.?$/, '.'));
    out.push('', ...TABLE_HEAD, ...rows(section, shape));
    // The built-in backends (their packages' descriptors); an adapter package documents its own.
    if (section === 'storage' || section === 'catalogue') out.push(...backendTables(section, BUILT_IN_BACKENDS[section] as never));
    if (SECTION_EXTRA[section]) out.push('', SECTION_EXTRA[section]);
  }
  out.push('', ENVIRONMENT, '');
  return out.join('\n');
}
