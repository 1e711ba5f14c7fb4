import type { Schedule } from '@memberkit/types';
import type { FederationConfig } from './federation/federation-config.js';

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
  /**
   * Stopgap until certificate and JWT sessions land: bearer tokens configured for local use,
   * each mapped to the subject it authenticates. Never use in production.
   */
  localTokens: Record<string, string>;
}

export interface CoreConfig {
  node: NodeIdentity;
  access: AccessConfig;
  /** Path the API is served under (`/mn`): routes are `{basePath}/v1/...` and `{basePath}/v2/...`. */
  basePath: string;
  /** Largest accepted object, in bytes (InsufficientResources beyond). Default: no limit. */
  maxObjectBytes?: number;
  /** Largest page listObjects and getLogRecords return whatever count asks. Default 10000. */
  maxPageSize?: number;
  /** The Coordinating Node and Tier 4 settings; absent: a node on its own (no replication, no CN checks). */
  federation?: FederationConfig;
}

export const DEFAULT_SCHEDULE: Schedule = { hour: '*', mday: '*', min: '0/3', mon: '*', sec: '10', wday: '?', year: '*' };

export const DEFAULT_MAX_PAGE_SIZE = 10_000;
