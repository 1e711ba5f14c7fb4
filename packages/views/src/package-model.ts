import type { CatalogueAdapter, ObjectRecord } from '@memberkit/types';
import { eventLoopPacer, seriesHead } from '@memberkit/core';
import type { ResourceMap } from '@memberkit/science';
import { locationsOf } from './locations.js';

/** One member of a package as the map names it, resolved against the catalogue. */
export interface PackageMember {
  /** The identifier the map gives (a PID, or a SID). */
  id: string;
  /** The object it names here (a SID resolves to the head of its series); absent when not held. */
  record?: ObjectRecord;
  /** `prov:atLocation` the map gives for it (a relative path in the package), if any. */
  location?: string;
}

/**
 * A resource map version with its members resolved: what views and packages of the map
 * share whatever the caller (access is checked per caller on top of this). Built once per
 * map version and cached; linear in the map's size.
 */
export interface PackageModel {
  mapRecord: ObjectRecord;
  map: ResourceMap;
  /** Members in document order, without duplicates and without the map itself. */
  members: PackageMember[];
  /** Members the map says document something (cito:documents / isDocumentedBy). */
  metadataIds: ReadonlySet<string>;
  /** For each data member: the members that document it. */
  documentedBy: ReadonlyMap<string, readonly string[]>;
  /** Documenting members, the one documenting the most first. */
  metadataByLinks: readonly string[];
  /** Identifiers (map's ids and the PIDs they resolved to) this model was computed from. */
  ids: ReadonlySet<string>;
}

/** The record an identifier names here: a PID, else the head of the series a SID names. */
export async function resolveId(metadata: CatalogueAdapter, id: string): Promise<ObjectRecord | undefined> {
  const direct = await metadata.get(id);
  if (direct) return direct;
  const members = await metadata.seriesMembers(id);
  const head = seriesHead(members);
  return head === undefined ? undefined : metadata.get(head);
}

export async function buildPackageModel(metadata: CatalogueAdapter, mapRecord: ObjectRecord, map: ResourceMap): Promise<PackageModel> {
  const mapPid = mapRecord.sysmeta.identifier;
  const ids = new Set<string>([mapPid]);
  if (mapRecord.sysmeta.seriesId) ids.add(mapRecord.sysmeta.seriesId);
  const locations = locationsOf(map);
  const members: PackageMember[] = [];
  const seen = new Set<string>();
  const pace = eventLoopPacer();
  for (const id of map.aggregated) {
    await pace();
    if (seen.has(id) || id === mapPid) continue;
    seen.add(id);
    ids.add(id);
    const record = await resolveId(metadata, id);
    const m: PackageMember = { id };
    if (record) {
      if (record.sysmeta.identifier === mapPid) continue;
      m.record = record;
      ids.add(record.sysmeta.identifier);
    }
    const location = locations.get(id);
    if (location !== undefined) m.location = location;
    members.push(m);
  }
  const documentedBy = new Map<string, string[]>();
  const links = new Map<string, number>();
  const pairs = new Set<string>();
  for (const { metadata: md, data } of map.documents) {
    const pair = `${md}\u0000${data}`;
    if (pairs.has(pair)) continue;
    pairs.add(pair);
    links.set(md, (links.get(md) ?? 0) + 1);
    let list = documentedBy.get(data);
    if (!list) documentedBy.set(data, (list = []));
    list.push(md);
  }
  const metadataByLinks = [...links.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id);
  return { mapRecord, map, members, metadataIds: new Set(links.keys()), documentedBy, metadataByLinks, ids };
}
