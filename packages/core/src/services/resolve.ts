import type { ApiVersion, CatalogueAdapter, ObjectRecord, SeriesMember } from '@memberkit/types';
import { fail, type Operation } from '../errors.js';
import { acceptsSid } from '../protocol/operations.js';

/**
 * The head of a series: "Where an operation accepts a SID, it acts on the head PID, which is
 * the latest object in the obsolescence chain." Members not obsoleted by another member are
 * chain ends; the latest uploaded of them is the head (ties: the greater PID, so the answer
 * is stable). If every member is obsoleted (a cycle a CN forced), the latest upload wins.
 */
export function seriesHead(members: readonly SeriesMember[]): string | undefined {
  if (members.length === 0) return undefined;
  const inSeries = new Set(members.map((m) => m.pid));
  const ends = members.filter((m) => m.obsoletedBy === undefined || !inSeries.has(m.obsoletedBy));
  const pool = ends.length > 0 ? ends : members;
  const latest = pool.reduce((a, b) => {
    const d = a.dateUploaded.getTime() - b.dateUploaded.getTime();
    return d > 0 || (d === 0 && a.pid > b.pid) ? a : b;
  });
  return latest.pid;
}

/**
 * The record operation `op` of API `version` acts on. A PID is looked up directly; a SID
 * resolves to its head where the operation table says the operation accepts one. Otherwise
 * NotFound, with a description saying why: on v1 a SID is not an identifier, and an object
 * missing here may still exist elsewhere in the federation.
 */
export async function resolveObject(metadata: CatalogueAdapter, op: Operation, id: string, version: ApiVersion): Promise<ObjectRecord> {
  const direct = await metadata.get(id);
  if (direct) return direct;
  const members = await metadata.seriesMembers(id);
  if (members.length > 0) {
    if (!acceptsSid(op, version)) {
      throw fail(op, 'NotFound', `'${id}' is a series identifier (SID); this operation needs a PID (on v2, operations that accept a SID resolve it to the head PID)`, { pid: id });
    }
    const head = seriesHead(members);
    const record = head === undefined ? undefined : await metadata.get(head);
    if (record) return record;
  }
  throw fail(op, 'NotFound', `no object '${id}' on this node; ask a Coordinating Node (CNRead.resolve) where it is held`, { pid: id });
}
