import { z } from 'zod';

/** The default node identifier: valid for the production CN, whose rule is NODE_IDENTIFIER_RULE. */
export const DEFAULT_NODE_IDENTIFIER = 'urn:node:memberkitLocal';
/** The production Coordinating Node accepts node identifiers matching this (and nothing else). */
export const NODE_IDENTIFIER_RULE = /^urn:node:\w{2,16}$/;

/** Why the production CN would refuse this node identifier, or undefined when it accepts it. */
export function nodeIdentifierProblem(id: string): string | undefined {
  return NODE_IDENTIFIER_RULE.test(id) ? undefined : `node.identifier "${id}" does not match the Coordinating Node's rule ${NODE_IDENTIFIER_RULE.source} (urn:node: and 2 to 16 letters, digits or _), e.g. urn:node:MYREPO`;
}

const schedule = z.strictObject({
  hour: z.string(), mday: z.string(), min: z.string(), mon: z.string(), sec: z.string(), wday: z.string(), year: z.string(),
});

const accessRule = z.strictObject({
  subject: z.array(z.string().min(1)).min(1),
  permission: z.array(z.enum(['read', 'write', 'changePermission'])).min(1),
});

/**
 * memberkit.config.json. Every option, its default and meaning; paths are relative to the
 * file's folder. `memberkit serve` writes a complete one on first run.
 */
export const configSchema = z.strictObject({
  node: z.strictObject({
    /** Node reference published to the federation, e.g. urn:node:MYNODE. */
    identifier: z.string().min(1).default(DEFAULT_NODE_IDENTIFIER),
    name: z.string().min(1).default('memberkit local node'),
    description: z.string().min(1).default('A DataONE Member Node served by memberkit'),
    /** Public base URL (with the base path). Default: http://localhost:{port}{basePath}. */
    baseURL: z.string().url().optional(),
    subject: z.string().min(1).default(`CN=${DEFAULT_NODE_IDENTIFIER},DC=dataone,DC=org`),
    contactSubject: z.array(z.string().min(1)).min(1).default(['CN=memberkit operator,DC=dataone,DC=org']),
    replicate: z.boolean().default(false),
    synchronize: z.boolean().default(true),
    schedule: schedule.default({ hour: '*', mday: '*', min: '0/3', mon: '*', sec: '10', wday: '?', year: '*' }),
    properties: z.record(z.string(), z.string()).default({}),
  }).prefault({}),
  server: z.strictObject({
    port: z.number().int().min(0).max(65535).default(8080),
    host: z.string().default('0.0.0.0'),
    basePath: z.string().regex(/^(\/[^/]+)*$/, 'basePath must look like /mn (or be empty)').default('/mn'),
    /**
     * Serve HTTPS: the server certificate (chain) and key (PEM files), and the CA bundles
     * (PEM files) client certificates must chain to. Client certificates are requested,
     * not required. Absent: plain HTTP (behind a proxy that terminates TLS).
     */
    tls: z.strictObject({ cert: z.string().min(1), key: z.string().min(1), ca: z.array(z.string().min(1)).default([]) }).optional(),
  }).prefault({}),
  /**
   * Where bytes live: `{ "type": "filesystem", "root": "objects" }` (managed, the default),
   * `{ "type": "tree", "root": "/srv/archive" }` (an existing tree, read-only), or any
   * registered backend (packages/cli/src/backends). The other keys are the backend's options.
   */
  storage: z.looseObject({ type: z.string().default('filesystem') }).prefault({}),
  /** The catalogue and event log: `{ "type": "sqlite", "file": "memberkit.db" }` by default. */
  catalogue: z.looseObject({ type: z.string().default('sqlite') }).prefault({}),
  /**
   * Wrap mode: present when the storage is an existing archive to publish as it is. A
   * scanner keeps the catalogue in step with the storage; these are the defaults every
   * wrapped object gets.
   */
  wrap: z.strictObject({
    /** PID of an item: its path or key (whitespace and % percent-encoded), with this prefix. */
    pidPrefix: z.string().default(''),
    /** extension (no dot) -> formatId, overriding the format list's guess. */
    formatOverrides: z.record(z.string(), z.string()).default({}),
    rightsHolder: z.string().min(1),
    accessPolicy: z.array(accessRule).default([{ subject: ['public'], permission: ['read'] }]),
    checksumAlgorithm: z.enum(['SHA-1', 'MD5', 'SHA-256']).default('SHA-1'),
    /** Rescan every N seconds while serving (0: only at start and on `memberkit scan`). */
    rescanIntervalSeconds: z.number().int().min(0).default(0),
  }).optional(),
  access: z.strictObject({
    administrators: z.array(z.string().min(1)).default([]),
    cnSubjects: z.array(z.string().min(1)).default([]),
    createPolicy: z.union([z.literal('authenticated'), z.array(z.string().min(1))]).default('authenticated'),
  }).prefault({}),
  /** Who is calling: client certificates (server.tls, or forwarded by a proxy), bearer JWTs, CN lookups. */
  auth: z.strictObject({
    /** CA bundles (PEM files) forwarded client certificates must chain to. Default: server.tls.ca. */
    clientCa: z.array(z.string().min(1)).optional(),
    /** A client certificate forwarded by a reverse proxy that terminates TLS. */
    proxy: z.strictObject({
      header: z.string().min(1).default('x-ssl-client-cert'),
      /** Addresses or CIDRs of the proxies; the header is ignored from anywhere else. */
      trustedProxies: z.array(z.string().min(1)).min(1),
      verifyHeader: z.string().min(1).optional(),
      verifyValue: z.string().default('SUCCESS'),
    }).optional(),
    jwt: z.strictObject({
      /** Files: PEM certificates (the CN's), SPKI PEM public keys or JWK JSON. */
      keys: z.array(z.string().min(1)).default([]),
      issuer: z.string().min(1).optional(),
      algorithms: z.array(z.enum(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'])).optional(),
      clockToleranceSeconds: z.number().int().min(0).default(60),
    }).prefault({}),
    identity: z.strictObject({
      /** CN for getSubjectInfo and the node list. Default: federation.cnBaseUrl. */
      cnBaseUrl: z.string().url().optional(),
      lookupSubjectInfo: z.boolean().default(true),
      cnSubjectsFromNodeList: z.boolean().default(true),
      useCertificateExtension: z.boolean().default(true),
      cacheTtlSeconds: z.number().int().positive().default(3600),
      timeoutMs: z.number().int().positive().default(5000),
    }).prefault({}),
  }).prefault({}),
  limits: z.strictObject({
    maxObjectBytes: z.number().int().positive().optional(),
    maxPageSize: z.number().int().positive().default(10000),
  }).prefault({}),
  /** The Coordinating Node and Tier 4 (replication). Absent: the node stands alone. */
  federation: z.strictObject({
    /** CN base URL without the version, e.g. https://cn.dataone.org/cn. */
    cnBaseUrl: z.string().url(),
    /** How this node authenticates to the CN and to other nodes. */
    credentials: z.strictObject({
      /** A file holding a JWT naming this node's subject. */
      tokenFile: z.string().optional(),
      /** This node's client certificate and key (PEM files). */
      certificate: z.strictObject({ cert: z.string(), key: z.string() }).optional(),
      /** CA bundles (PEM files) for the CN's and other nodes' server certificates. */
      ca: z.array(z.string()).default([]),
    }).prefault({}),
    replication: z.strictObject({
      concurrency: z.number().int().positive().default(2),
      maxAttempts: z.number().int().positive().default(5),
      /** A node stopped mid-job resumes its jobs after this lease (ms). */
      leaseMs: z.number().int().positive().default(60_000),
      /** Delay before a retry (ms); default exponential from 2 s. */
      retryDelayMs: z.number().int().positive().optional(),
    }).prefault({}),
    /** POST synchronization failure reports here as JSON. */
    syncFailureWebhook: z.string().url().optional(),
    /** Check identifier reservations with the CN on create and update. */
    checkReservations: z.boolean().default(true),
  }).optional(),
  /** Optional Member Node APIs, each listed in the capabilities when on. */
  extensions: z.strictObject({
    /** MNView: landing pages (GET /views/{theme}/{id}) and listViews. */
    views: z.boolean().default(true),
    /** MNPackage: BagIt zips of resource maps (GET /packages/{type}/{id}). */
    packages: z.boolean().default(true),
    /** MNQuery: the `solr` engine over a search index kept current with the catalogue. */
    query: z.strictObject({
      enabled: z.boolean().default(true),
      /** sqlite: an embedded FTS5 index in `file`; postgres: a shared full-text index at `url`, in `schema`. */
      index: z.enum(['sqlite', 'postgres']).default('sqlite'),
      /** The SQLite index file (relative to the configuration file). */
      file: z.string().min(1).default('memberkit-query.db'),
      url: z.string().min(1).optional(),
      schema: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default('memberkit_query'),
    }).refine((q) => q.index !== 'postgres' || q.url !== undefined, { message: 'extensions.query.url is required when index is postgres', path: ['url'] }).prefault({}),
  }).prefault({}),
  /**
   * Prometheus metrics (prom-client) at `http://{host}:{port}/metrics`, on a port of their own
   * so that the public API never exposes them. Off by default.
   */
  metrics: z.strictObject({
    enabled: z.boolean().default(false),
    port: z.number().int().min(0).max(65535).default(9464),
    host: z.string().default('127.0.0.1'),
  }).prefault({}),
  log: z.strictObject({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') }).prefault({}),
});

export type MemberkitConfig = z.infer<typeof configSchema>;
export type MemberkitConfigInput = z.input<typeof configSchema>;
