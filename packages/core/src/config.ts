import type { Schedule } from '@memberkit/types';
import type { FederationConfig } from './federation/federation-config.js';
import type { SweepOptions } from './services/sweep.js';

export type { FederationConfig };

/** The node's identity, as published in its Node document (getCapabilities). */
export interface NodeIdentity {
  /** Node reference, e.g. `urn:node:MYNODE`. */
  identifier: string;
  name: string;
  description: string;
  /** Public base URL including the base path, e.g. `https://data.example.org/mn`. */
  baseURL: string;
  /** The node's own subject (DN of its certificate). */
  subject: string;
  /** Who to contact (at least one). */
  contactSubject: string[];
  /** Node accepts replicas (Tier 4). */
  replicate: boolean;
  /** Coordinating Nodes synchronize (harvest) this node. */
  synchronize: boolean;
  /** Harvest schedule, cron-like fields as in the Node document. */
  schedule: Schedule;
  /** v2 node properties (key/value). */
  properties?: Record<string, string>;
}

/** Who may do what beyond object access policies. */
export interface AccessConfig {
  /** Subjects with every right on every object (node administrators). */
  administrators: string[];
  /** Subjects of the federation's Coordinating Nodes (CN-only operations, all rights). */
  cnSubjects: string[];
  /**
   * Who may create: 'authenticated' (any authenticated caller), or a list of subjects and
   * groups. Administrators always may.
   */
  createPolicy: 'authenticated' | string[];
}

/**
 * How callers are identified (the session). Every source is optional; with none configured
 * every caller is `public`. See SessionResolver for the order and the conflict rule.
 */
export interface AuthConfig {
  /**
   * Client certificates (presented in the TLS handshake when the node serves HTTPS itself,
   * or forwarded by a trusted proxy): the CA certificates (PEM text) they must chain to.
   */
  clientCa?: string[];
  /** A client certificate forwarded by a reverse proxy that terminates TLS. */
  proxy?: {
    /** Header carrying the client certificate (PEM, URL-encoded PEM or base64 DER). Default `x-ssl-client-cert`. */
    header?: string;
    /** Addresses or CIDRs (IPv4/IPv6) of the proxies whose header is honoured; from anywhere else it is ignored. */
    trustedProxies: string[];
    /** Optional header in which the proxy reports its own verification (e.g. `x-ssl-client-verify`). */
    verifyHeader?: string;
    /** The value of verifyHeader meaning "verified". Default `SUCCESS`. */
    verifyValue?: string;
  };
  /** Bearer JWTs (`Authorization: Bearer ...`). */
  jwt?: {
    /** Keys tokens may be signed with: PEM certificates (the CN's), SPKI PEM public keys or JWK JSON (text). */
    keys: string[];
    /** Required issuer (`iss`), when set. */
    issuer?: string;
    /** Allowed algorithms. Default RS256/384/512, PS256/384/512, ES256/384/512, EdDSA (never HS* or none). */
    algorithms?: string[];
    /** Leeway for exp/nbf, in seconds. Default 60. */
    clockToleranceSeconds?: number;
    /**
     * A JSON Web Key Set URL whose keys are trusted beside `keys` (a memberkit CN publishes its
     * token key at `{cn}/v2/tokens/keys`); re-read when a token names a key id it does not hold.
     */
    jwksUrl?: string;
  };
  /** Equivalent identities, groups and CN subjects. */
  identity?: {
    /** CN base URL for getSubjectInfo and listNodes. Default: federation.cnBaseUrl, if any. */
    cnBaseUrl?: string;
    /** Ask the CN for the subject information of callers whose credential carries none. Default true when a CN is known. */
    lookupSubjectInfo?: boolean;
    /** Add the CN node list's CN subjects to access.cnSubjects. Default true when a CN is known. */
    cnSubjectsFromNodeList?: boolean;
    /** Use the SubjectInfo extension of client certificates. Default true. */
    useCertificateExtension?: boolean;
    /** How long CN answers are cached, in seconds. Default 3600. */
    cacheTtlSeconds?: number;
    /** Timeout of a CN lookup, in milliseconds. Default 5000. */
    timeoutMs?: number;
  };
}

export interface CoreConfig {
  node: NodeIdentity;
  access: AccessConfig;
  /** Who is calling: certificates, proxy, JWT, CN lookups. Absent: every caller is public. */
  auth?: AuthConfig;
  /** Path the API is served under (`/mn`): routes are `{basePath}/v1/...` and `{basePath}/v2/...`. */
  basePath: string;
  /** Largest accepted object, in bytes (InsufficientResources beyond). Default: no limit. */
  maxObjectBytes?: number;
  /** Largest page listObjects and getLogRecords return whatever count asks. Default 10000. */
  maxPageSize?: number;
  /**
   * Records the read operations keep in memory, checked against the catalogue's change feed
   * before each use (services/record-cache.ts). Default 20000; 0 reads the catalogue every time.
   */
  recordCacheSize?: number;
  /** The Coordinating Node and Tier 4 settings; absent: a node on its own (no replication, no CN checks). */
  federation?: FederationConfig;
  /** Timing of the sweep of stranded bytes and of the change feed's retention (services/sweep.ts); defaults there. */
  sweep?: SweepOptions;
}

export const DEFAULT_SCHEDULE: Schedule = { hour: '*', mday: '*', min: '0/3', mon: '*', sec: '10', wday: '?', year: '*' };

export const DEFAULT_MAX_PAGE_SIZE = 10_000;
