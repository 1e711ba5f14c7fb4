import type { CallContext, ExtensionKit } from '@memberkit/core';
import { formatById, type ObjectRecord } from '@memberkit/types';
import { isResourceMapFormat, isScienceMetadataFormat, type ResourceMap, type ScienceMetadata } from '@memberkit/science';
import { refOf, type ScienceServices } from './shared.js';

export interface PackageFile {
  pid: string;
  /** File name (sysmeta fileName, else the PID). */
  name: string;
  /** false: listed by the resource map, but the caller may not read it (or it is not on this node). */
  readable: boolean;
  size?: number;
  formatId?: string;
  formatName?: string;
  mediaType?: string;
  role: 'metadata' | 'data' | 'resource map';
  /** Download link (MNRead.get), absolute. */
  href?: string;
  /** Landing page of the member. */
  view?: string;
}

/** Everything a theme may show about an object: gathered once per request. */
export interface LandingPage {
  record: ObjectRecord;
  pid: string;
  title: string;
  /** The science metadata document describing the object (the object itself, or its package's). */
  metadataRecord?: ObjectRecord;
  metadata?: ScienceMetadata;
  /** The resource map of the package the object is in (or the object itself). */
  mapRecord?: ObjectRecord;
  map?: ResourceMap;
  files: PackageFile[];
  versions: { obsoletes?: string; obsoletedBy?: string; seriesId?: string };
  citation: string;
  urls: {
    /** This page (default theme). */
    self: string;
    object: (pid: string) => string;
    view: (pid: string, theme?: string) => string;
    /** The BagIt package of the object's package, when it has one. */
    package?: string;
  };
}

export interface UrlBase {
  /** `https://host/mn/v2` — everything before `/views/`. */
  api: string;
}

function mediaTypeOf(record: ObjectRecord): string | undefined {
  return record.sysmeta.mediaType?.name ?? formatById(record.sysmeta.formatId)?.mediaType;
}

export function fileName(record: ObjectRecord): string {
  return record.sysmeta.fileName ?? record.sysmeta.identifier;
}

function year(s: string | undefined): string | undefined {
  return s ? /\d{4}/.exec(s)?.[0] : undefined;
}

/** "Family, G., Family, G. (Year). Title. Publisher. https://doi.org/..." */
export function citationOf(md: ScienceMetadata | undefined, title: string, pid: string, fallbackYear: string, nodeName?: string): string {
  const authors = (md?.creators ?? []).map((c) => (c.familyName ? `${c.familyName}${c.givenName ? `, ${c.givenName.split(/\s+/).map((g) => `${g[0]}.`).join(' ')}` : ''}` : c.name));
  const who = authors.length > 5 ? `${authors.slice(0, 5).join(', ')}, et al.` : authors.join(', ');
  const doi = md?.alternateIdentifiers.find((a) => /^(doi:|https?:\/\/(dx\.)?doi\.org\/)/i.test(a));
  const id = doi ? `https://doi.org/${doi.replace(/^(doi:|https?:\/\/(dx\.)?doi\.org\/)/i, '')}` : pid;
  const parts = [who ? `${who} (${year(md?.pubDate) ?? fallbackYear}).` : `(${year(md?.pubDate) ?? fallbackYear}).`, `${title.replace(/\.$/, '')}.`];
  const publisher = md?.publisher ?? nodeName;
  if (publisher) parts.push(`${publisher}.`);
  parts.push(id);
  return parts.join(' ');
}

async function readable(kit: ExtensionKit, ctx: CallContext, pid: string): Promise<ObjectRecord | undefined> {
  const record = await kit.metadata.get(pid);
  return record && kit.access.allows(ctx.session, record.sysmeta, 'read') ? record : undefined;
}

/**
 * Gather the landing page of `record` (already authorized): its science metadata (the object
 * itself when it is a metadata document, else the document that documents it in its package),
 * its package's files, versions, citation. Missing or bad documents leave fields out, never fail.
 */
export async function gatherLanding(kit: ExtensionKit, services: ScienceServices, ctx: CallContext, record: ObjectRecord, base: UrlBase): Promise<LandingPage> {
  const pid = record.sysmeta.identifier;
  const enc = encodeURIComponent;
  const urls: LandingPage['urls'] = {
    self: `${base.api}/views/default/${enc(pid)}`,
    object: (p) => `${base.api}/object/${enc(p)}`,
    view: (p, theme = 'default') => `${base.api}/views/${enc(theme)}/${enc(p)}`,
  };

  // The package: the object itself when it is a resource map, else the newest current map aggregating it.
  let mapRecord: ObjectRecord | undefined;
  let map: ResourceMap | undefined;
  if (isResourceMapFormat(record.sysmeta.formatId)) {
    mapRecord = record;
    map = await services.science.resourceMap(refOf(record)).catch(() => undefined);
  } else {
    const candidates: ObjectRecord[] = [];
    for (const m of await services.packages.mapsOf(pid).catch(() => [])) {
      const r = await readable(kit, ctx, m).catch(() => undefined);
      if (r) candidates.push(r);
    }
    candidates.sort((a, b) => Number(!!a.sysmeta.obsoletedBy) - Number(!!b.sysmeta.obsoletedBy) || Number(!!a.sysmeta.archived) - Number(!!b.sysmeta.archived) || b.sysmeta.dateUploaded.getTime() - a.sysmeta.dateUploaded.getTime());
    for (const c of candidates) {
      const parsed = await services.science.resourceMap(refOf(c)).catch(() => undefined);
      if (parsed) {
        mapRecord = c;
        map = parsed;
        break;
      }
    }
  }

  // The science metadata document.
  let metadataRecord: ObjectRecord | undefined;
  let metadata: ScienceMetadata | undefined;
  const tryMetadata = async (r: ObjectRecord | undefined): Promise<boolean> => {
    if (!r || !isScienceMetadataFormat(r.sysmeta.formatId)) return false;
    const md = await services.science.metadata(refOf(r)).catch(() => undefined);
    if (!md) return false;
    metadataRecord = r;
    metadata = md;
    return true;
  };
  if (!(await tryMetadata(record)) && map) {
    const documenting = map.documents.filter((d) => d.data === pid).map((d) => d.metadata);
    const documentsMost = [...new Set(map.documents.map((d) => d.metadata))].sort((a, b) => map!.documents.filter((d) => d.metadata === b).length - map!.documents.filter((d) => d.metadata === a).length);
    for (const m of [...documenting, ...documentsMost, ...map.aggregated]) {
      if (await tryMetadata(await readable(kit, ctx, m).catch(() => undefined))) break;
    }
  }

  // The files of the package (or the object alone).
  const files: PackageFile[] = [];
  const metadataPids = new Set(map?.documents.map((d) => d.metadata) ?? []);
  const members = map ? map.aggregated : [pid];
  for (const m of members) {
    const r = m === pid ? record : await readable(kit, ctx, m).catch(() => undefined);
    if (!r) {
      files.push({ pid: m, name: m, readable: false, role: metadataPids.has(m) ? 'metadata' : 'data' });
      continue;
    }
    const format = formatById(r.sysmeta.formatId);
    const role: PackageFile['role'] = isResourceMapFormat(r.sysmeta.formatId) ? 'resource map' : metadataPids.has(m) || format?.formatType === 'METADATA' ? 'metadata' : 'data';
    const f: PackageFile = { pid: m, name: fileName(r), readable: true, size: r.sysmeta.size, formatId: r.sysmeta.formatId, role, href: urls.object(m), view: urls.view(m) };
    if (format?.formatName) f.formatName = format.formatName;
    const mt = mediaTypeOf(r);
    if (mt) f.mediaType = mt;
    files.push(f);
  }
  if (mapRecord) urls.package = `${base.api}/packages/${enc('application/bagit-097')}/${enc(mapRecord.sysmeta.identifier)}`;

  const title = metadata?.title ?? record.sysmeta.fileName ?? pid;
  const versions: LandingPage['versions'] = {};
  if (record.sysmeta.obsoletes) versions.obsoletes = record.sysmeta.obsoletes;
  if (record.sysmeta.obsoletedBy) versions.obsoletedBy = record.sysmeta.obsoletedBy;
  if (record.sysmeta.seriesId) versions.seriesId = record.sysmeta.seriesId;
  const page: LandingPage = {
    record,
    pid,
    title,
    files,
    versions,
    citation: citationOf(metadata, title, (metadataRecord ?? record).sysmeta.identifier, String(record.sysmeta.dateUploaded.getUTCFullYear())),
    urls,
  };
  if (metadataRecord) page.metadataRecord = metadataRecord;
  if (metadata) page.metadata = metadata;
  if (mapRecord) page.mapRecord = mapRecord;
  if (map) page.map = map;
  return page;
}

/** schema.org Dataset (science-on-schema.org conventions) for a landing page. */
export function jsonLdOf(page: LandingPage): Record<string, unknown> {
  const md = page.metadata;
  const doi = md?.alternateIdentifiers.find((a) => /^(doi:|https?:\/\/(dx\.)?doi\.org\/)/i.test(a));
  const ld: Record<string, unknown> = {
    '@context': { '@vocab': 'https://schema.org/' },
    '@type': 'Dataset',
    '@id': page.urls.self,
    url: page.urls.self,
    name: page.title,
    identifier: doi ? { '@type': 'PropertyValue', propertyID: 'https://registry.identifiers.org/registry/doi', value: doi.replace(/^https?:\/\/(dx\.)?doi\.org\//i, 'doi:'), url: `https://doi.org/${doi.replace(/^(doi:|https?:\/\/(dx\.)?doi\.org\/)/i, '')}` } : page.pid,
    dateModified: page.record.sysmeta.dateSysMetadataModified.toISOString(),
  };
  if (md?.abstract) ld.description = md.abstract;
  if (md?.creators.length) {
    ld.creator = {
      '@list': md.creators.map((c) => {
        const person = !!(c.givenName || c.familyName);
        const p: Record<string, unknown> = { '@type': person ? 'Person' : 'Organization', name: c.name };
        if (c.orcid) p['@id'] = c.orcid;
        if (c.givenName) p.givenName = c.givenName;
        if (c.familyName) p.familyName = c.familyName;
        if (c.email) p.email = c.email;
        if (person && c.organization) p.affiliation = { '@type': 'Organization', name: c.organization };
        return p;
      }),
    };
  }
  if (md?.keywords.length) ld.keywords = md.keywords;
  if (md?.pubDate) ld.datePublished = md.pubDate;
  if (md?.publisher) ld.publisher = { '@type': 'Organization', name: md.publisher };
  if (md?.license) ld.license = md.license.url ?? md.license.name;
  if (md?.temporal.length) ld.temporalCoverage = md.temporal.map((t) => (t.begin === t.end ? t.begin : `${t.begin ?? '..'}/${t.end ?? '..'}`));
  if (md?.spatial.length) {
    ld.spatialCoverage = md.spatial.map((s) => ({
      '@type': 'Place',
      ...(s.description ? { name: s.description } : {}),
      geo: s.west === s.east && s.north === s.south ? { '@type': 'GeoCoordinates', latitude: s.north, longitude: s.west } : { '@type': 'GeoShape', box: `${s.south} ${s.west} ${s.north} ${s.east}` },
    }));
  }
  const files = page.files.filter((f) => f.readable && f.href);
  if (files.length) {
    ld.distribution = files.map((f) => ({ '@type': 'DataDownload', '@id': f.href, name: f.name, identifier: f.pid, contentUrl: f.href, encodingFormat: f.mediaType ?? f.formatId, contentSize: f.size }));
  }
  if (page.versions.obsoletes) ld.isBasedOn = page.urls.view(page.versions.obsoletes);
  ld.citation = page.citation;
  ld.isAccessibleForFree = true;
  return ld;
}

/** JSON for a `<script type="application/ld+json">` block: `<` escaped so it cannot end the script. */
export function jsonLdScript(ld: unknown): string {
  return JSON.stringify(ld, null, 2).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}
