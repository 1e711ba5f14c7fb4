import type { DataEntity } from '@memberkit/science';

/**
 * The data entities a science metadata document describes (EML `dataTable`, `otherEntity`...):
 * what a landing page shows beside each file of the package. They come only from
 * `ScienceMetadata.entities`, read with the rest of the document in the science worker pool
 * (issue #15: untrusted documents are never parsed on the main thread).
 */
export type { DataEntity, EntityAttribute } from '@memberkit/science';

/**
 * Which entity describes which file: a distribution URL naming the file's PID (a resolve or
 * object URL), the entity's id, then the file name as objectName or entityName. Each entity
 * describes at most one file; unmatched entities are returned too.
 */
export function matchEntities(entities: readonly DataEntity[], files: ReadonlyArray<{ pid: string; name: string }>): { byPid: Map<string, DataEntity>; unmatched: DataEntity[] } {
  const byPid = new Map<string, DataEntity>();
  const used = new Set<DataEntity>();
  const lastSegment = (u: string): string | undefined => {
    const seg = u.replace(/[?#].*$/, '').split('/').pop();
    if (!seg) return undefined;
    try {
      return decodeURIComponent(seg);
    } catch {
      return seg;
    }
  };
  const byUrl = new Map<string, DataEntity>();
  const byId = new Map<string, DataEntity>();
  const byObjectName = new Map<string, DataEntity>();
  const byName = new Map<string, DataEntity>();
  for (const e of entities) {
    for (const u of e.urls) {
      const s = lastSegment(u);
      if (s && !byUrl.has(s)) byUrl.set(s, e);
    }
    if (e.id && !byId.has(e.id)) byId.set(e.id, e);
    if (e.objectName && !byObjectName.has(e.objectName)) byObjectName.set(e.objectName, e);
    if (!byName.has(e.name)) byName.set(e.name, e);
  }
  for (const lookup of [(f: { pid: string }) => byUrl.get(f.pid), (f: { pid: string }) => byId.get(f.pid), (f: { name: string }) => byObjectName.get(f.name), (f: { name: string }) => byName.get(f.name)]) {
    for (const f of files) {
      if (byPid.has(f.pid)) continue;
      const e = lookup(f);
      if (e && !used.has(e)) {
        byPid.set(f.pid, e);
        used.add(e);
      }
    }
  }
  return { byPid, unmatched: entities.filter((e) => !used.has(e)) };
}
