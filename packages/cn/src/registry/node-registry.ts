import { AdapterError, NodeCodec, type Node } from '@memberkit/types';
import { num, text, type SqlStore } from '@memberkit/adapter-sql';
import { sql, type Kysely } from 'kysely';
import type { NodeDirectory, RegisteredNode } from '../ports.js';
import { normaliseBaseUrl } from './registration-rules.js';

/** A registered node with the registry's own facts about it. */
export interface NodeEntry extends RegisteredNode {
  registered: Date;
  updated: Date;
  registeredBy: string;
  approvedAt?: Date;
}

/** Why an insert or replace was refused: the field in use and the entry that holds it. */
export interface RegistryConflict {
  field: 'identifier' | 'baseURL';
  /** The identifier of the entry already holding it. */
  holder: string;
}

interface NodeRow {
  identifier: unknown; document: unknown; approved: unknown; approved_at: unknown; registered: unknown; updated: unknown; registered_by: unknown;
}

const COLUMNS = sql.raw('identifier, document, approved, approved_at, registered, updated, registered_by');

function toEntry(r: NodeRow): NodeEntry {
  const approvedAt = r.approved_at === null || r.approved_at === undefined ? undefined : new Date(num(r.approved_at));
  return {
    node: NodeCodec.decode(text(r.document)),
    approved: num(r.approved) === 1,
    registered: new Date(num(r.registered)),
    updated: new Date(num(r.updated)),
    registeredBy: text(r.registered_by),
    ...(approvedAt ? { approvedAt } : {}),
  };
}

function normalised(node: Node): string {
  const url = normaliseBaseUrl(node.baseURL);
  if (url === undefined) throw new AdapterError('invalid', `the baseURL '${node.baseURL}' is not an http(s) URL`);
  return url;
}

/** The stored form: the v2 Node document (AdapterError 'invalid' when the schema cannot hold it). */
function encoded(node: Node): string {
  try {
    return NodeCodec.encode(node, 'v2');
  } catch (err) {
    throw new AdapterError('invalid', `the node document cannot be written as a valid Node: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * The CN's node registry over `mk_cn_nodes` (schema.ts) in the CN's SQL store: storage only,
 * the CNRegister rules live in register-service.ts. Identifier and normalised baseURL are
 * unique; a refused insert or replace says which one is in use and by whom, also when two
 * registrations race (the database's UNIQUE constraints decide, then the holder is read).
 * The store must be open (the CN opens it with its migrations).
 */
export class NodeRegistry implements NodeDirectory {
  constructor(private readonly store: SqlStore, private readonly now: () => number = Date.now) {}

  async get(nodeId: string): Promise<NodeEntry | undefined> {
    return this.store.read('read a registered node', async (trx) => {
      const { rows } = await sql<NodeRow>`SELECT ${COLUMNS} FROM mk_cn_nodes WHERE identifier = ${nodeId}`.execute(trx);
      return rows[0] === undefined ? undefined : toEntry(rows[0]);
    });
  }

  async list(options: { includeUnapproved?: boolean } = {}): Promise<NodeEntry[]> {
    return this.store.read('list registered nodes', async (trx) => {
      const { rows } = options.includeUnapproved
        ? await sql<NodeRow>`SELECT ${COLUMNS} FROM mk_cn_nodes ORDER BY identifier`.execute(trx)
        : await sql<NodeRow>`SELECT ${COLUMNS} FROM mk_cn_nodes WHERE approved = 1 ORDER BY identifier`.execute(trx);
      return rows.map(toEntry);
    });
  }

  /** Adds a node; the conflict when its identifier or baseURL is already registered. */
  async insert(entry: { node: Node; registeredBy: string; approved: boolean }): Promise<RegistryConflict | undefined> {
    const { node } = entry;
    const baseUrl = normalised(node);
    const document = encoded(node);
    const now = this.now();
    try {
      return await this.store.write('register a node', async (trx) => {
        const conflict = await this.conflict(trx, node.identifier, baseUrl);
        if (conflict) return conflict;
        await sql`INSERT INTO mk_cn_nodes (identifier, base_url, node_type, document, approved, approved_at, registered, updated, registered_by)
          VALUES (${node.identifier}, ${baseUrl}, ${node.type}, ${document}, ${entry.approved ? 1 : 0}, ${entry.approved ? now : null}, ${now}, ${now}, ${entry.registeredBy})`.execute(trx);
        return undefined;
      });
    } catch (e) {
      // Another registration committed between our check and our insert.
      if (AdapterError.is(e) && e.kind === 'already-exists') {
        const conflict = await this.store.read('register a node', (trx) => this.conflict(trx, node.identifier, baseUrl));
        if (conflict) return conflict;
      }
      throw e;
    }
  }

  /**
   * Replaces the document of `nodeId` (the caller kept what must be kept); 'missing' when no
   * such node is registered, the conflict when the new baseURL is another node's.
   */
  async replace(nodeId: string, node: Node): Promise<'replaced' | 'missing' | RegistryConflict> {
    const baseUrl = normalised(node);
    const document = encoded(node);
    try {
      return await this.store.write('update a registered node', async (trx) => {
        const { rows } = await sql<{ identifier: unknown }>`SELECT identifier FROM mk_cn_nodes WHERE base_url = ${baseUrl} AND identifier <> ${nodeId}`.execute(trx);
        if (rows[0] !== undefined) return { field: 'baseURL', holder: text(rows[0].identifier) } satisfies RegistryConflict;
        const r = await sql`UPDATE mk_cn_nodes SET document = ${document}, base_url = ${baseUrl}, updated = ${this.now()} WHERE identifier = ${nodeId}`.execute(trx);
        return Number(r.numAffectedRows ?? 0n) > 0 ? 'replaced' : 'missing';
      });
    } catch (e) {
      if (AdapterError.is(e) && e.kind === 'already-exists') {
        const holder = await this.store.read('update a registered node', async (trx) => {
          const { rows } = await sql<{ identifier: unknown }>`SELECT identifier FROM mk_cn_nodes WHERE base_url = ${baseUrl}`.execute(trx);
          return rows[0] === undefined ? undefined : text(rows[0].identifier);
        });
        if (holder !== undefined && holder !== nodeId) return { field: 'baseURL', holder };
      }
      throw e;
    }
  }

  /** Approves a node: 'approved', 'already' when it was, 'missing' when it is not registered. */
  async approve(nodeId: string): Promise<'approved' | 'already' | 'missing'> {
    return this.store.write('approve a node', async (trx) => {
      const { rows } = await sql<{ approved: unknown }>`SELECT approved FROM mk_cn_nodes WHERE identifier = ${nodeId}`.execute(trx);
      if (rows[0] === undefined) return 'missing';
      if (num(rows[0].approved) === 1) return 'already';
      await sql`UPDATE mk_cn_nodes SET approved = 1, approved_at = ${this.now()} WHERE identifier = ${nodeId}`.execute(trx);
      return 'approved';
    });
  }

  private async conflict(trx: Kysely<any>, identifier: string, baseUrl: string): Promise<RegistryConflict | undefined> {
    const { rows } = await sql<{ identifier: unknown; base_url: unknown }>`SELECT identifier, base_url FROM mk_cn_nodes WHERE identifier = ${identifier} OR base_url = ${baseUrl}`.execute(trx);
    const same = rows.find((r) => text(r.identifier) === identifier);
    if (same) return { field: 'identifier', holder: identifier };
    const other = rows.find((r) => text(r.base_url) === baseUrl);
    return other ? { field: 'baseURL', holder: text(other.identifier) } : undefined;
  }
}
