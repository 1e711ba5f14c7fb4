/** How this node takes part in the federation (Tier 4, CN interplay). */
export interface FederationConfig {
  /** The Coordinating Node's base URL without the version, e.g. `https://cn.dataone.org/cn`. */
  cnBaseUrl: string;
  /** How this node authenticates to the CN and to other Member Nodes (getReplica of restricted content). */
  credentials?: {
    /** A JWT naming this node's subject (or a function giving the current one). */
    token?: string | (() => string | Promise<string>);
    /** This node's client certificate (PEM). */
    certificate?: { cert: string; key: string };
    /** CA bundle(s) for the CN's and other nodes' server certificates (PEM). */
    ca?: string[];
  };
  replication?: {
    /** Replication jobs run at once (default 2). */
    concurrency?: number;
    /** Attempts before a replication is reported FAILED (default 5). */
    maxAttempts?: number;
    /** Lease of a running job, renewed while it runs; a node killed mid-job resumes it after this (default 60 s). */
    leaseMs?: number;
    /** Delay before retrying attempt n (default: exponential from 2 s). */
    retryDelayMs?: number;
  };
  /** Synchronization failures are logged; also POSTed as JSON to this URL when set. */
  syncFailureWebhook?: string;
  /** How long the CN's node list is cached (default 10 min). */
  nodeListTtlMs?: number;
  /** Check identifier reservations with the CN on create and update (default true). */
  checkReservations?: boolean;
}
