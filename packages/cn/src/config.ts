import { z } from 'zod';
import type { CoreConfig } from '@memberkit/core';

/**
 * The Coordinating Node's configuration: `memberkit.config.json` in a CN folder
 * (`memberkit cn init DIR` writes one). Paths are relative to the file's folder. The shape
 * follows a Member Node's configuration where the two share a key (node, server, access,
 * auth, limits, log); `cn` holds what only a CN has.
 */

const doc = <T extends z.ZodType>(schema: T, description: string): T => schema.meta({ description }) as T;

/** The default identifier of a local Coordinating Node. */
export const DEFAULT_CN_IDENTIFIER = 'urn:node:CNLOCAL';
/** The CN's token signing key (private, PEM) in its folder; its public key beside it (`.pub.pem`). */
export const CN_SIGNING_KEY_FILE = 'cn-jwt-key.pem';
export const CN_PUBLIC_KEY_FILE = 'cn-jwt-key.pub.pem';

/** The `cn` section: what only a Coordinating Node has. H3 and H4 rely on every key here. */
export const cnSectionSchema = z.strictObject({
  reservationTtlSeconds: doc(z.number().int().positive().default(86_400), 'How long an identifier reservation (reserveIdentifier, generateIdentifier) holds before it expires, in seconds.'),
  changesToV2Objects: doc(z.enum(['refuse', 'apply']).default('refuse'), 'CN-side setAccessPolicy / setRightsHolder on objects whose authoritative Member Node speaks v2: "refuse" (as the production CN: NotAuthorized naming the node to call instead) or "apply".'),
  identity: doc(z.strictObject({
    verifiers: doc(z.array(z.string().min(1)).default([]), 'Subjects allowed verifyAccount besides administrators (published as a restriction of the CNIdentity service).'),
    mappers: doc(z.array(z.string().min(1)).default([]), 'Subjects allowed mapIdentity besides administrators (published as a restriction of the CNIdentity service).'),
  }).prefault({}), 'who may verify accounts and map identities'),
  registration: doc(z.strictObject({
    autoApprove: doc(z.boolean().default(false), 'Approve newly registered nodes at once (test federations); otherwise `memberkit cn approve-node ID`.'),
    allowLoopback: doc(z.boolean().default(false), 'Accept node registrations whose baseURL is a loopback address (local federations).'),
  }).prefault({}), 'node registration (CNRegister)'),
  tokens: doc(z.strictObject({
    signingKey: doc(z.string().min(1).default(CN_SIGNING_KEY_FILE), 'The private key (PEM) the CN signs bearer JWTs with; the CN trusts its public key.'),
    issuer: doc(z.string().default(''), 'The `iss` claim of tokens the CN signs (empty: none).'),
    ttlSeconds: doc(z.number().int().positive().default(43_200), 'Lifetime of tokens the CN signs, in seconds.'),
  }).prefault({}), 'bearer tokens the CN signs'),
}).prefault({});

export type CnSection = z.infer<typeof cnSectionSchema>;

const schedule = z.strictObject({ hour: z.string(), mday: z.string(), min: z.string(), mon: z.string(), sec: z.string(), wday: z.string(), year: z.string() });

const sqlCatalogue = z.strictObject({
  type: z.literal('sql'),
  dialect: doc(z.enum(['postgres', 'mysql', 'sqlite']), 'The database: PostgreSQL, MySQL/MariaDB (`mysql`) or SQLite.'),
  connection: doc(z.string().min(1).optional(), 'A URL (`postgres://user@host:5432/db`) or, for sqlite, a file path. One of `connection` or `connectionEnv` is required.'),
  connectionEnv: doc(z.string().min(1).optional(), 'Name of an environment variable holding the connection URL.'),
  poolSize: doc(z.number().int().positive().default(10), 'Connections of the process (postgres, mysql).'),
}).refine((o) => o.connection !== undefined || o.connectionEnv !== undefined, { message: 'connection or connectionEnv is required', path: ['connection'] });

const sqliteCatalogue = z.strictObject({
  type: z.literal('sqlite'),
  file: doc(z.string().min(1).default('memberkit-cn.db'), 'The database file.'),
});

/** `memberkit.config.json` of a Coordinating Node. */
export const cnConfigFileSchema = z.strictObject({
  node: doc(z.strictObject({
    type: doc(z.literal('cn'), 'Always "cn": `memberkit serve` serves a Coordinating Node from this folder.'),
    identifier: doc(z.string().min(1).default(DEFAULT_CN_IDENTIFIER), 'The CN\'s node reference, `urn:node:...`.'),
    name: doc(z.string().min(1).default('memberkit Coordinating Node'), 'Human-readable name.'),
    description: doc(z.string().min(1).default('A DataONE Coordinating Node served by memberkit'), 'One sentence about the CN.'),
    baseURL: doc(z.string().url().optional(), 'The public URL with the base path (`https://cn.example.org/cn`). Default `http://localhost:{port}{basePath}`.'),
    subject: doc(z.string().min(1).default(`CN=${DEFAULT_CN_IDENTIFIER},DC=dataone,DC=org`), 'The CN\'s own subject.'),
    contactSubject: doc(z.array(z.string().min(1)).min(1).default(['CN=memberkit operator,DC=dataone,DC=org']), 'Who to contact.'),
    schedule: doc(schedule.optional(), 'Unused by a CN (kept for symmetry with a Member Node).'),
    properties: doc(z.record(z.string(), z.string()).default({}), 'v2 node properties published in the Node document.'),
  }), 'the CN\'s Node document (getCapabilities)'),
  server: doc(z.strictObject({
    port: doc(z.number().int().min(0).max(65535).default(8090), 'TCP port (0: any free port). `--port` overrides it.'),
    host: doc(z.string().default('0.0.0.0'), 'Address to listen on. `--host` overrides it.'),
    basePath: doc(z.string().regex(/^(\/[^/]+)*$/, 'basePath must look like /cn (or be empty)').default('/cn'), 'Path prefix: `{basePath}/v1/...`, `{basePath}/v2/...`.'),
    tls: doc(z.strictObject({ cert: z.string().min(1), key: z.string().min(1), ca: z.array(z.string().min(1)).default([]) }).optional(), 'Serve HTTPS (PEM files).'),
  }).prefault({}), 'where the API listens'),
  storage: doc(z.strictObject({
    type: z.literal('filesystem').default('filesystem'),
    root: doc(z.string().min(1).default('objects'), 'Folder of the bytes the CN holds (science metadata, resource maps).'),
  }).prefault({}), 'the bytes the CN holds'),
  catalogue: doc(z.discriminatedUnion('type', [sqliteCatalogue, sqlCatalogue]).prefault({ type: 'sqlite' }), 'the CN\'s database: its authoritative system metadata, event log and CN tables (`mk_cn_*`)'),
  access: doc(z.strictObject({
    administrators: doc(z.array(z.string().min(1)).default([]), 'CN administrators: every right on every object, CN-private operations.'),
    cnSubjects: doc(z.array(z.string().min(1)).default([]), 'Subjects of the federation\'s other Coordinating Nodes (CN-private operations).'),
  }).prefault({}), 'who administers the CN'),
  auth: doc(z.strictObject({
    clientCa: doc(z.array(z.string().min(1)).optional(), 'CA bundles (PEM files) client certificates must chain to.'),
    proxy: doc(z.strictObject({
      header: z.string().min(1).default('x-ssl-client-cert'),
      trustedProxies: z.array(z.string().min(1)).min(1),
      verifyHeader: z.string().min(1).optional(),
      verifyValue: z.string().default('SUCCESS'),
    }).optional(), 'A client certificate forwarded by a reverse proxy.'),
    jwt: doc(z.strictObject({
      keys: doc(z.array(z.string().min(1)).default([]), 'Files of further keys bearer JWTs may be signed with (the CN\'s own signing key is always trusted).'),
      issuer: doc(z.string().min(1).optional(), 'Required `iss`, when set.'),
      algorithms: z.array(z.enum(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'])).optional(),
      clockToleranceSeconds: z.number().int().min(0).default(60),
    }).prefault({}), 'Bearer JWTs.'),
  }).prefault({}), 'who is calling'),
  limits: doc(z.strictObject({
    maxObjectBytes: z.number().int().positive().optional(),
    maxPageSize: z.number().int().positive().default(10_000),
  }).prefault({}), 'sizes'),
  log: doc(z.strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
  }).prefault({}), 'what the CN writes'),
  cn: doc(cnSectionSchema, 'what only a Coordinating Node has'),
});

export type CnConfigFile = z.infer<typeof cnConfigFileSchema>;
export type CnConfigFileInput = z.input<typeof cnConfigFileSchema>;

/**
 * What createCoordinatingNode runs on: the core's configuration (node identity, access,
 * auth with key files read) plus the `cn` section.
 */
export interface CnConfig extends CoreConfig {
  cn: CnSection;
  /** The CN's token signing key (PEM text), when its file exists. */
  tokenSigningKeyPem?: string;
}
