import { z } from 'zod';
import type { KeyDoc } from '@memberkit/types';

/** The default node identifier: valid for the production CN, whose rule is NODE_IDENTIFIER_RULE. */
export const DEFAULT_NODE_IDENTIFIER = 'urn:node:memberkitLocal';
/** The production Coordinating Node accepts node identifiers matching this (and nothing else). */
export const NODE_IDENTIFIER_RULE = /^urn:node:\w{2,16}$/;

/** Why the production CN would refuse this node identifier, or undefined when it accepts it. */
export function nodeIdentifierProblem(id: string): string | undefined {
  return NODE_IDENTIFIER_RULE.test(id) ? undefined : `node.identifier "${id}" does not match the Coordinating Node's rule ${NODE_IDENTIFIER_RULE.source} (urn:node: and 2 to 16 letters, digits or _), e.g. urn:node:MYREPO`;
}

/**
 * Documentation of a key, read by config-doc.ts to write CONFIGURATION.md (so the reference
 * cannot drift from what the schema accepts). One type for the CLI and the adapters' option
 * schemas (@memberkit/types), which write it into zod's global registry the same way.
 */
export type { KeyDoc } from '@memberkit/types';

export function doc<T extends z.ZodType>(schema: T, description: string, more: Omit<KeyDoc, 'description'> = {}): T {
  return schema.meta({ description, ...more }) as T;
}

const schedule = z.strictObject({
  hour: z.string(), mday: z.string(), min: z.string(), mon: z.string(), sec: z.string(), wday: z.string(), year: z.string(),
});

const accessRule = z.strictObject({
  subject: z.array(z.string().min(1)).min(1),
  permission: z.array(z.enum(['read', 'write', 'changePermission'])).min(1),
});

/**
 * memberkit.config.json: every option, its default and meaning (templates/node/CONFIGURATION.md
 * is generated from these descriptions); paths are relative to the file's folder.
 */
export const configSchema = z.strictObject({
  node: doc(z.strictObject({
    identifier: doc(z.string().min(1).default(DEFAULT_NODE_IDENTIFIER), 'The node reference published to the federation, `urn:node:YOURNODE` (assigned at registration). The production Coordinating Node accepts only `urn:node:` followed by 2 to 16 letters, digits or `_`: the node warns at start about another one, and `memberkit register` refuses it.'),
    name: doc(z.string().min(1).default('memberkit local node'), 'Human-readable name.'),
    description: doc(z.string().min(1).default('A DataONE Member Node served by memberkit'), 'One sentence about the repository.'),
    baseURL: doc(z.string().url().optional(), 'The public URL clients use, with the base path (`https://data.example.org/mn`). Set it behind a proxy. `--base-url` overrides it; when derived, `--port` moves it.', { shownDefault: '`http://localhost:{port}{basePath}`' }),
    subject: doc(z.string().min(1).default(`CN=${DEFAULT_NODE_IDENTIFIER},DC=dataone,DC=org`), "The node's own subject (the DN of its DataONE client certificate)."),
    contactSubject: doc(z.array(z.string().min(1)).min(1).default(['CN=memberkit operator,DC=dataone,DC=org']), 'Who to contact: at least one subject registered with DataONE.'),
    replicate: doc(z.boolean().default(false), 'Accepts replicas from other nodes (Tier 4).'),
    synchronize: doc(z.boolean().default(true), "Coordinating Nodes harvest this node's content."),
    schedule: doc(schedule.default({ hour: '*', mday: '*', min: '0/3', mon: '*', sec: '10', wday: '?', year: '*' }), 'Harvest schedule: `hour`, `mday`, `min`, `mon`, `sec`, `wday`, `year`, cron-like strings as in the Node document.', { leaf: true, shownDefault: 'every 3 minutes (`min: "0/3"`, `sec: "10"`)' }),
    properties: doc(z.record(z.string(), z.string()).default({}), 'v2 node properties (string keys and values), published in the Node document.'),
  }).prefault({}), 'the Node document (getCapabilities)'),
  server: doc(z.strictObject({
    port: doc(z.number().int().min(0).max(65535).default(8080), 'TCP port (`0`: any free port). `--port` overrides it.'),
    host: doc(z.string().default('0.0.0.0'), 'Address to listen on; `127.0.0.1` behind a local reverse proxy. `--host` overrides it.'),
    basePath: doc(z.string().regex(/^(\/[^/]+)*$/, 'basePath must look like /mn (or be empty)').default('/mn'), 'Path prefix of the API: `{basePath}/v1/...` and `{basePath}/v2/...`; empty for none.'),
    workers: doc(z.union([z.number().int().min(1).max(256), z.literal('auto')]).default('auto'), 'Node processes serving this folder behind the one port (node:cluster), sharing its catalogue and storage: `1` is a single process; `"auto"` is the number of cores when the catalogue is PostgreSQL or MariaDB/MySQL, or SQLite under a read-only node (`wrap`, or a mapped catalogue), and `1` for a writable SQLite node (SQLite has one writer at a time). The first worker alone runs the background work (wrap scans, the sweep, query indexing); every worker claims federation jobs (each job runs once). `--workers` overrides it. See README "Several processes".'),
    tls: doc(z.strictObject({
      cert: doc(z.string().min(1), 'The server certificate (chain), PEM file.'),
      key: doc(z.string().min(1), 'Its private key, PEM file.'),
      ca: doc(z.array(z.string().min(1)).default([]), 'CA bundles (PEM files) client certificates must chain to. Client certificates are requested, not required.'),
    }).optional(), 'Serve HTTPS. Absent: plain HTTP (behind a proxy that terminates TLS).'),
  }).prefault({}), 'where the API listens'),
  adapters: doc(z.array(z.string().min(1)).default([]), 'Adapter packages that offer more `storage` and `catalogue` types (each exports `memberkitBackends`, see docs/write-an-adapter.md): npm package names (`"@acme/memberkit-adapter-x"`), resolved from this file\'s folder first, then from memberkit\'s own install, or paths to a package folder (`"./local-adapter"`). The built-in types below need none.'),
  storage: doc(z.looseObject({ type: doc(z.string().default('filesystem'), 'The backend (below); the other keys of the section are its options.') }).prefault({}), 'where object bytes live'),
  catalogue: doc(z.looseObject({ type: doc(z.string().default('sqlite'), 'The backend (below); the other keys of the section are its options.') }).prefault({}), 'system metadata and the event log'),
  wrap: doc(z.strictObject({
    pidPrefix: doc(z.string().default(''), 'PID of an item: this prefix + its relative path or key (whitespace and `%` percent-encoded).'),
    formatOverrides: doc(z.record(z.string(), z.string()).default({}), "Glob or file extension → formatId, before the format is identified from the file's first bytes: `{ \"**/*.eml.xml\": \"eml://ecoinformatics.org/eml-2.1.1\", \"data/**\": \"text/csv\", \"dat\": \"text/plain\" }`. A key with `/`, `*`, `?`, `[` or `{` is a glob over the relative path (without `/`: over the file name at any depth); any other key is an extension without the dot. Values must be formatIds of the federation's list or of `extraFormats`."),
    extraFormats: doc(z.array(z.string().min(1)).default([]), "formatIds outside the federation's list that wrap mode may publish (by override, or when identified, e.g. `http://datacite.org/schema/kernel-4`). Without them, wrap mode publishes only the list's formatIds."),
    rightsHolder: doc(z.string().min(1), 'The rightsHolder of every wrapped object (a subject).'),
    accessPolicy: doc(z.array(accessRule).default([{ subject: ['public'], permission: ['read'] }]), 'Access rules of every wrapped object: `[{ "subject": ["public"], "permission": ["read"] }]`.', { shownDefault: 'public read' }),
    checksumAlgorithm: doc(z.enum(['SHA-1', 'MD5', 'SHA-256']).optional(), 'Computed once per file version, in the background. The default is a digest the storage knows without reading the bytes: MD5 on an S3 bucket (the ETag of objects uploaded in one part), SHA-1 on a tree.', { shownDefault: 'MD5 on `s3-bucket`, SHA-1 on `tree`' }),
    rescanIntervalSeconds: doc(z.number().int().min(0).default(0), 'Rescan every N seconds while serving (`0`: at start and on `memberkit scan` only).'),
    datasets: doc(z.union([z.literal('folders'), z.literal(false)]).default(false), 'Datasets from folders (`tree` and `s3-bucket`; a key\'s folder is the part before its last `/`): `"folders"` publishes, after each complete scan, a generated OAI-ORE resource map for every folder holding exactly one science metadata document (identified by content) and at least one data file beside it; the metadata document `cito:documents` each data file. Its series is the PID of `<folder>/.dataset-map`, each version `<series>.v<N>`; a change of the folder\'s files publishes the next version obsoleting the previous one; a folder that stops following the rule gets its map archived. `false`: no generated maps.'),
  }).optional(), 'publish an existing archive as it is (optional section). Present when the storage is an existing archive (`tree`, `s3-bucket`): a scanner keeps the catalogue in step with it, and these are the defaults every wrapped object gets'),
  access: doc(z.strictObject({
    administrators: doc(z.array(z.string().min(1)).default([]), 'Subjects with every right on every object.'),
    cnSubjects: doc(z.array(z.string().min(1)).default([]), "Subjects of the federation's Coordinating Nodes (CN-only operations, all rights)."),
    createPolicy: doc(z.union([z.literal('authenticated'), z.array(z.string().min(1))]).default('authenticated'), 'Who may create objects: `"authenticated"` or a list of subjects and groups.'),
  }).prefault({}), 'who may do what beyond object access policies'),
  auth: doc(z.strictObject({
    clientCa: doc(z.array(z.string().min(1)).optional(), 'CA bundles (PEM files) forwarded client certificates must chain to.', { shownDefault: '`server.tls.ca`' }),
    proxy: doc(z.strictObject({
      header: doc(z.string().min(1).default('x-ssl-client-cert'), 'The header holding the forwarded client certificate (PEM, URL-encoded).'),
      trustedProxies: doc(z.array(z.string().min(1)).min(1), 'Addresses or CIDRs of the proxies (`["10.0.0.5", "fd00::/8"]`); the header is ignored from anywhere else.'),
      verifyHeader: doc(z.string().min(1).optional(), "A header holding the proxy's verification result."),
      verifyValue: doc(z.string().default('SUCCESS'), 'The value of `verifyHeader` that means verified.'),
    }).optional(), 'A client certificate forwarded by a reverse proxy that terminates TLS.'),
    jwt: doc(z.strictObject({
      keys: doc(z.array(z.string().min(1)).default([]), "Files of keys bearer JWTs may be signed with: the CN's certificate (PEM), SPKI public keys or JWKs."),
      issuer: doc(z.string().min(1).optional(), 'Required `iss`, when set.'),
      algorithms: doc(z.array(z.enum(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'])).optional(), 'Allowed `alg` values (never HS* or none).', { shownDefault: 'asymmetric only' }),
      clockToleranceSeconds: doc(z.number().int().min(0).default(60), 'Leeway for expiry checks.'),
      jwksUrl: doc(z.string().url().optional(), "A JSON Web Key Set URL whose keys are trusted too: a memberkit Coordinating Node's `{cnBaseUrl}/v2/tokens/keys`, so tokens it signs (`memberkit cn token`) are accepted. Read on first use and again when a token names an unknown key id.", { shownDefault: 'none' }),
    }).prefault({}), 'Bearer JWTs.'),
    identity: doc(z.strictObject({
      cnBaseUrl: doc(z.string().url().optional(), 'CN asked for subject information (equivalent identities, groups) and its node list (CN subjects).', { shownDefault: '`federation.cnBaseUrl`' }),
      lookupSubjectInfo: doc(z.boolean().default(true), "Expand a caller's subjects with the CN's getSubjectInfo (equivalent identities, groups)."),
      cnSubjectsFromNodeList: doc(z.boolean().default(true), "Treat the subjects of the CN's node list as Coordinating Nodes."),
      useCertificateExtension: doc(z.boolean().default(true), "Read equivalent identities and groups from a DataONE certificate's SubjectInfo extension."),
      cacheTtlSeconds: doc(z.number().int().positive().default(3600), 'Cache lifetime of CN lookups.'),
      timeoutMs: doc(z.number().int().positive().default(5000), 'Timeout of CN lookups.'),
    }).prefault({}), 'Equivalent identities, groups and CN subjects (on when a CN is known).'),
  }).prefault({}), 'who is calling. Sessions come from, in this order: a client certificate in the TLS handshake (`server.tls`), a client certificate forwarded by a trusted reverse proxy, a bearer JWT; otherwise the caller is `public`. Every credential presented must verify (else InvalidToken); the first valid one decides the session'),
  sweep: doc(z.strictObject({
    graceSeconds: doc(z.number().positive().default(600), 'A write intent older than this whose catalogue commit never happened marks stranded bytes (a process killed between storing bytes and cataloguing them); the sweep removes them.'),
    intervalSeconds: doc(z.number().min(0).default(600), 'How often the sweep runs after the pass at start (0: at start only). It also prunes the catalogue\'s change feed to its retention (7 days, at most 1,000,000 entries).'),
  }).prefault({}), 'the sweep of stranded bytes and of old change-feed entries (the first worker of every `memberkit serve` runs it; safe on several hosts at once)'),
  limits: doc(z.strictObject({
    maxObjectBytes: doc(z.number().int().positive().optional(), 'Largest accepted upload, in bytes (InsufficientResources beyond).', { shownDefault: 'none' }),
    maxPageSize: doc(z.number().int().positive().default(10000), 'Largest page listObjects and getLogRecords return, whatever `count` asks.'),
  }).prefault({}), 'sizes'),
  federation: doc(z.strictObject({
    cnBaseUrl: doc(z.string().url(), "The Coordinating Node's base URL without the version, e.g. `https://cn.dataone.org/cn`."),
    credentials: doc(z.strictObject({
      tokenFile: doc(z.string().optional(), "A file holding a JWT naming this node's subject."),
      certificate: doc(z.strictObject({ cert: z.string(), key: z.string() }).optional(), "This node's client certificate and key: `{ \"cert\": \"...pem\", \"key\": \"...pem\" }`.", { leaf: true }),
      ca: doc(z.array(z.string()).default([]), "CA bundles (PEM files) for the CN's and other nodes' server certificates."),
    }).prefault({}), 'How this node authenticates to the CN and to other nodes.'),
    replication: doc(z.strictObject({
      concurrency: doc(z.number().int().positive().default(2), 'Replication jobs run at once.'),
      maxAttempts: doc(z.number().int().positive().default(5), 'Attempts before a job fails for good.'),
      leaseMs: doc(z.number().int().positive().default(60_000), "A stopped node's jobs resume after this lease (ms)."),
      retryDelayMs: doc(z.number().int().positive().optional(), 'Delay before a retry (ms).', { shownDefault: 'exponential from 2 s' }),
    }).prefault({}), 'Replication jobs (Tier 4).'),
    syncFailureWebhook: doc(z.string().url().optional(), 'URL that receives synchronization failure reports as JSON (POST).', { shownDefault: 'none' }),
    checkReservations: doc(z.boolean().default(true), 'Check identifier reservations with the CN on create and update.'),
  }).optional(), 'the Coordinating Node this node works with (optional section). Present once the node is registered with a DataONE federation (`memberkit register`); absent, the node stands alone'),
  extensions: doc(z.strictObject({
    views: doc(z.boolean().default(true), 'MNView: landing pages (`GET /views/{theme}/{id}`: `default` HTML with schema.org JSON-LD, `metadata`, `jsonld`) and listViews.'),
    packages: doc(z.boolean().default(true), "MNPackage: BagIt zips of a resource map's members (`GET /packages/{type}/{id}`), streamed while built."),
    query: doc(z.strictObject({
      enabled: doc(z.boolean().default(true), 'Serve the `solr` engine over a search index kept current with the catalogue.'),
      index: doc(z.enum(['sqlite', 'postgres']).default('sqlite'), 'sqlite: an embedded FTS5 index in `file`; postgres: a shared full-text index at `url`, in `schema`.'),
      file: doc(z.string().min(1).default('memberkit-query.db'), 'The SQLite index file.'),
      url: doc(z.string().min(1).optional(), 'The PostgreSQL index (**required** when `index` is `postgres`).'),
      schema: doc(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default('memberkit_query'), 'The PostgreSQL schema of the index.'),
    }).refine((q) => q.index !== 'postgres' || q.url !== undefined, { message: 'extensions.query.url is required when index is postgres', path: ['url'] }).prefault({}), 'MNQuery.'),
  }).prefault({}), 'optional APIs, each listed in the capabilities when on'),
  metrics: doc(z.strictObject({
    enabled: doc(z.boolean().default(false), 'Serve Prometheus metrics at `http://{host}:{port}/metrics`.'),
    port: doc(z.number().int().min(0).max(65535).default(9464), 'Port of the metrics endpoint, apart from the API so that the public never sees it.'),
    host: doc(z.string().default('127.0.0.1'), 'Address of the metrics endpoint (`0.0.0.0` for a Prometheus on another machine).'),
  }).prefault({}), 'Prometheus metrics (off by default)'),
  log: doc(z.strictObject({
    level: doc(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(), 'Logs are pino JSON lines on stdout: one per request at info; the start banner and progress go to stderr. The request lines cost throughput: on 2 cores, cached getSystemMetadata answered ~24,000 requests/s at `info` (stdout to a file) and ~34,000 at `warn`, which writes no line for a request that succeeds or fails as expected (server faults are still logged at error; `/metrics` still counts every request).', { shownDefault: '`MEMBERKIT_LOG_LEVEL`, else `info`' }),
  }).prefault({}), 'what the node writes'),
});

export type MemberkitConfig = z.infer<typeof configSchema>;
export type MemberkitConfigInput = z.input<typeof configSchema>;
