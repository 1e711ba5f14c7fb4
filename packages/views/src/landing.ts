import type { CallContext, ExtensionKit } from '@memberkit/core';
import { formatById, type ObjectRecord } from '@memberkit/types';
import { isResourceMapFormat, isScienceMetadataFormat, type ResourceMap, type ScienceMetadata } from '@memberkit/science';
import { mayDescribe } from './describe-rule.js';
import { matchEntities, type DataEntity } from './entities.js';
import { stripControls } from './file-names.js';
import type { PackageModel } from './package-model.js';
import { httpUrl } from './safe-url.js';
import type { NodeInfo } from './node-info.js';
import { refOf, type ScienceServices } from './shared.js';

/** Members listed per landing page (the rest through `?start=`), and files named in JSON-LD. */
export const FILES_PER_PAGE = 100;
export const MAX_DISTRIBUTION = 1000;
/** Science metadata documents tried (parsed) before a page gives up looking for one. */
const MAX_METADATA_TRIES = 5;

export interface PackageFile {
  pid: string;
  /** File name for display and download (sysmeta fileName, else the PID), control characters removed. */
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
  /** The entity of the science metadata describing this file (name, description, variables). */
  entity?: DataEntity;
}

/** Everything a theme may show about an object: gathered once per (object, package version, caller). */
export interface LandingPage {
  record: ObjectRecord;
  pid: string;
  title: string;
  /** The science metadata document describing the object (the object itself, or its package's). */
  metadataRecord?: ObjectRecord;
  /** Its content, URLs already limited to http(s). */
  metadata?: ScienceMetadata;
  /** The resource map of the package the object is in (or the object itself). */
  mapRecord?: ObjectRecord;
  map?: ResourceMap;
  /** The files on this page of the member list (FILES_PER_PAGE from `filePage.start`). */
  files: PackageFile[];
  /** The whole package: members listed, members the caller may read, their bytes. */
  fileTotals: { members: number; readable: number; bytes: number };
  filePage: { start: number; size: number; next?: string; previous?: string };
  /** Readable files for JSON-LD `distribution` (the first MAX_DISTRIBUTION). */
  distribution: PackageFile[];
  versions: { obsoletes?: string; obsoletedBy?: string; seriesId?: string };
  /** The citation, ending with `citationUrl`. */
  citation: string;
  /**
   * The link the citation ends with, one that resolves: the DOI (https://doi.org/...) when the
   * metadata gives one; else the federation's resolve URL when the node is registered and
   * synchronised (the CN holds the object and the URL outlives a move of the node); else the
   * node's own MNRead.get URL of the cited document.
   */
  citationUrl: string;
  /** The node serving the page (its Node document), when known. */
  node?: NodeInfo;
  /** Entities the metadata describes that are not files on this page (other pages, or not in the package). */
  otherEntities: DataEntity[];
  urls: {
    /** This page (default theme), canonical. */
    self: string;
    object: (pid: string) => string;
    view: (pid: string, theme?: string) => string;
    /** The BagIt package of the object's package, when it has one. */
    package?: string;
  };
  /** Identifiers whose change makes this page stale. */
  dependsOn(pid: string): boolean;
}

export interface UrlBase {
  /** `https://host/mn/v2` — everything before `/views/`. */
  api: string;
  /** The node serving the page. */
  node?: NodeInfo;
  /** The Coordinating Node's base URL (`https://cn.dataone.org/cn`) when the node is registered and synchronised. */
  federation?: string;
  /** Download links through `{api}/resolve/{pid}` instead of `{api}/object/{pid}` (ViewsOptions.downloads). */
  downloadsByResolve?: boolean;
}

export interface LandingOptions {
  /** First member listed (paging of large packages). */
  start?: number;
  /** The package already chosen by choosePackage (null: none). */
  package?: PackageModel | null;
}

function mediaTypeOf(record: ObjectRecord): string | undefined {
  return record.sysmeta.mediaType?.name ?? formatById(record.sysmeta.formatId)?.mediaType;
}

export function fileName(record: ObjectRecord): string {
  const name = stripControls(record.sysmeta.fileName ?? record.sysmeta.identifier);
  return name === '' ? stripControls(record.sysmeta.identifier) : name;
}

function year(s: string | undefined): string | undefined {
  return s ? /\d{4}/.exec(s)?.[0] : undefined;
}

const DOI = /^(doi:|https?:\/\/(dx\.)?doi\.org\/)/i;

/** The DOI of a document as a https://doi.org/ URL, when it names one. */
export function doiUrl(md: ScienceMetadata | undefined): string | undefined {
  const doi = md?.alternateIdentifiers.find((a) => DOI.test(a.trim()));
  return doi ? httpUrl(`https://doi.org/${doi.trim().replace(DOI, '')}`) : undefined;
}

/** Where a citation of `pid` without a DOI points (see LandingPage.citationUrl). */
export function resolveUrl(pid: string, base: UrlBase): string {
  const enc = encodeURIComponent(pid);
  if (base.federation && httpUrl(base.federation)) return `${base.federation.replace(/\/+$/, '')}/v2/resolve/${enc}`;
  return `${base.api}/${base.downloadsByResolve ? 'resolve' : 'object'}/${enc}`;
}

/** "Family, G., Family, G. (Year). Title. Publisher. https://doi.org/..." (`link`: what it ends with). */
export function citationOf(md: ScienceMetadata | undefined, title: string, link: string, fallbackYear: string, nodeName?: string): string {
  const authors = (md?.creators ?? []).slice(0, 6).map((c) => (c.familyName ? `${c.familyName}${c.givenName ? `, ${c.givenName.split(/\s+/).filter(Boolean).map((g) => `${g[0]}.`).join(' ')}` : ''}` : c.name));
  const who = authors.length > 5 ? `${authors.slice(0, 5).join(', ')}, et al.` : authors.join(', ');
  const parts = [who ? `${who} (${year(md?.pubDate) ?? fallbackYear}).` : `(${year(md?.pubDate) ?? fallbackYear}).`, `${title.replace(/\.$/, '')}.`];
  const publisher = md?.publisher ?? nodeName;
  if (publisher) parts.push(`${publisher}.`);
  parts.push(link);
  return parts.join(' ');
}

/**
 * How much of one document a page shows: a page is for people, and an uploaded document may
 * hold 120,000 keywords or a 10 MB abstract (the whole document stays available as metadata).
 */
export const PAGE_METADATA_LIMITS = { creators: 100, keywords: 100, temporal: 20, spatial: 100, alternateIdentifiers: 20, places: 100, textChars: 20_000 } as const;

const clip = (text: string | undefined): string | undefined =>
  text === undefined || text.length <= PAGE_METADATA_LIMITS.textChars ? text : `${text.slice(0, PAGE_METADATA_LIMITS.textChars).replace(/[\uD800-\uDBFF]$/, '')}…`;

/** Metadata as pages may show it: only http(s) URLs kept as URLs (licence, ORCID); lists and texts bounded (PAGE_METADATA_LIMITS). */
export function safeMetadata(md: ScienceMetadata): ScienceMetadata {
  const L = PAGE_METADATA_LIMITS;
  const out: ScienceMetadata = { ...md, keywords: md.keywords.slice(0, L.keywords), temporal: md.temporal.slice(0, L.temporal), spatial: md.spatial.slice(0, L.spatial), alternateIdentifiers: md.alternateIdentifiers.slice(0, L.alternateIdentifiers), creators: md.creators.slice(0, L.creators).map((c) => {
    const { orcid, ...rest } = c;
    const safe = httpUrl(orcid);
    return safe ? { ...rest, orcid: safe } : rest;
  }) };
  if (md.places) out.places = md.places.slice(0, L.places);
  for (const k of ['title', 'abstract'] as const) {
    const v = clip(md[k]);
    if (v !== undefined) out[k] = v;
  }
  if (md.license) {
    const { url, ...rest } = md.license;
    const safe = httpUrl(url);
    out.license = safe ? { ...rest, url: safe } : rest;
    if (!out.license.name && !out.license.url) delete out.license;
  }
  return out;
}

/**
 * The package shown on an object's page: the object itself when it is a resource map, else
 * the best map aggregating it that the caller may read AND that may describe it (mayDescribe:
 * a stranger's map never speaks for someone else's object); current before obsoleted, not
 * archived before archived, newest upload first.
 */
export async function choosePackage(kit: ExtensionKit, services: ScienceServices, ctx: CallContext, record: ObjectRecord): Promise<PackageModel | undefined> {
  if (isResourceMapFormat(record.sysmeta.formatId)) return services.packageModel(record);
  const ids = new Set<string>();
  for (const id of [record.sysmeta.identifier, record.sysmeta.seriesId]) {
    if (id) for (const m of await services.packages.mapsOf(id).catch(() => [])) ids.add(m);
  }
  const candidates: ObjectRecord[] = [];
  for (const id of ids) {
    const r = await kit.metadata.get(id).catch(() => undefined);
    if (r && isResourceMapFormat(r.sysmeta.formatId) && kit.access.allows(ctx.session, r.sysmeta, 'read') && mayDescribe(kit.access, r.sysmeta, record.sysmeta)) candidates.push(r);
  }
  candidates.sort(
    (a, b) =>
      Number(!!a.sysmeta.obsoletedBy) - Number(!!b.sysmeta.obsoletedBy) ||
      Number(!!a.sysmeta.archived) - Number(!!b.sysmeta.archived) ||
      b.sysmeta.dateUploaded.getTime() - a.sysmeta.dateUploaded.getTime() ||
      (a.sysmeta.identifier < b.sysmeta.identifier ? -1 : 1),
  );
  for (const c of candidates) {
    const model = await services.packageModel(c);
    if (model) return model;
  }
  return undefined;
}

/**
 * Gather the landing page of `record` (already authorized): its science metadata (the object
 * itself when it is a metadata document, else the document that documents it in its package),
 * one page of its package's files, totals, versions, citation. Linear in the package's size
 * (the package itself is resolved once per map version: PackageModel). Missing or bad
 * documents leave fields out, never fail.
 */
export async function gatherLanding(kit: ExtensionKit, services: ScienceServices, ctx: CallContext, record: ObjectRecord, base: UrlBase, options: LandingOptions = {}): Promise<LandingPage> {
  const pid = record.sysmeta.identifier;
  const enc = encodeURIComponent;
  const urls: LandingPage['urls'] = {
    self: `${base.api}/views/default/${enc(pid)}`,
    object: (p) => `${base.api}/${base.downloadsByResolve ? 'resolve' : 'object'}/${enc(p)}`,
    view: (p, theme = 'default') => `${base.api}/views/${enc(theme)}/${enc(p)}`,
  };
  const canRead = (r: ObjectRecord | undefined): r is ObjectRecord => !!r && kit.access.allows(ctx.session, r.sysmeta, 'read');

  const model = options.package !== undefined ? (options.package ?? undefined) : await choosePackage(kit, services, ctx, record).catch(() => undefined);
  const byId = new Map<string, ObjectRecord | undefined>(model?.members.map((m) => [m.id, m.record]) ?? []);

  // The science metadata document.
  let metadataRecord: ObjectRecord | undefined;
  let metadata: ScienceMetadata | undefined;
  let tries = 0;
  const tryMetadata = async (r: ObjectRecord | undefined): Promise<boolean> => {
    if (!r || !isScienceMetadataFormat(r.sysmeta.formatId) || tries >= MAX_METADATA_TRIES) return false;
    tries++;
    const md = await services.science.metadata(refOf(r)).catch(() => undefined);
    if (!md) return false;
    metadataRecord = r;
    metadata = safeMetadata(md);
    return true;
  };
  if (!(await tryMetadata(record)) && model) {
    const tried = new Set<string>();
    const own = [...(model.documentedBy.get(pid) ?? []), ...(record.sysmeta.seriesId ? (model.documentedBy.get(record.sysmeta.seriesId) ?? []) : [])];
    const candidates = function* (): Generator<string> {
      yield* own;
      yield* model.metadataByLinks;
      for (const m of model.members) yield m.id;
    };
    for (const id of candidates()) {
      if (tries >= MAX_METADATA_TRIES) break;
      if (tried.has(id)) continue;
      tried.add(id);
      const r = byId.get(id);
      if (canRead(r) && (await tryMetadata(r))) break;
    }
  }

  // The files of the package (or the object alone): totals over all, rows for one page.
  const start = Math.max(0, Math.floor(options.start ?? 0));
  const fileOf = (id: string, r: ObjectRecord | undefined): PackageFile => {
    const isMetadata = !!model?.metadataIds.has(id);
    if (!canRead(r)) return { pid: id, name: stripControls(id), readable: false, role: isMetadata ? 'metadata' : 'data' };
    const p = r.sysmeta.identifier;
    const format = formatById(r.sysmeta.formatId);
    const role: PackageFile['role'] = isResourceMapFormat(r.sysmeta.formatId) ? 'resource map' : isMetadata || format?.formatType === 'METADATA' ? 'metadata' : 'data';
    const f: PackageFile = { pid: p, name: fileName(r), readable: true, size: r.sysmeta.size, formatId: r.sysmeta.formatId, role, href: urls.object(p), view: urls.view(p) };
    if (format?.formatName) f.formatName = format.formatName;
    const mt = mediaTypeOf(r);
    if (mt) f.mediaType = mt;
    return f;
  };
  const members: Array<{ id: string; record?: ObjectRecord }> = model ? model.members : [{ id: pid, record }];
  const files: PackageFile[] = [];
  const distribution: PackageFile[] = [];
  const totals = { members: members.length, readable: 0, bytes: 0 };
  for (let i = 0; i < members.length; i++) {
    const m = members[i]!;
    const r = m.record?.sysmeta.identifier === pid ? record : m.record;
    const readable = canRead(r);
    if (readable) {
      totals.readable++;
      totals.bytes += r.sysmeta.size;
    }
    if (i >= start && i < start + FILES_PER_PAGE) files.push(fileOf(m.id, r));
    if (readable && distribution.length < MAX_DISTRIBUTION) distribution.push(i >= start && i < start + FILES_PER_PAGE ? files[files.length - 1]! : fileOf(m.id, r));
  }
  // The metadata's descriptions of the files on this page (EML entities, read by the science worker).
  let otherEntities: DataEntity[] = [];
  const entities = metadata?.entities ?? [];
  if (entities.length) {
    const { byPid, unmatched } = matchEntities(entities, files);
    for (const f of files) {
      const e = byPid.get(f.pid);
      if (e) f.entity = e;
    }
    // Entities matching files on other pages of a large package are not "other" files.
    otherEntities = totals.members > files.length ? [] : unmatched;
  }
  const filePage: LandingPage['filePage'] = { start, size: FILES_PER_PAGE };
  if (start + FILES_PER_PAGE < members.length) filePage.next = `${urls.self}?start=${start + FILES_PER_PAGE}#files`;
  if (start > 0) filePage.previous = `${urls.self}?start=${Math.max(0, start - FILES_PER_PAGE)}#files`;
  if (model) urls.package = `${base.api}/packages/${enc('application/bagit-097')}/${enc(model.mapRecord.sysmeta.identifier)}`;

  const title = metadata?.title ?? stripControls(record.sysmeta.fileName ?? pid);
  const versions: LandingPage['versions'] = {};
  if (record.sysmeta.obsoletes) versions.obsoletes = record.sysmeta.obsoletes;
  if (record.sysmeta.obsoletedBy) versions.obsoletedBy = record.sysmeta.obsoletedBy;
  if (record.sysmeta.seriesId) versions.seriesId = record.sysmeta.seriesId;
  const mdPid = (metadataRecord as ObjectRecord | undefined)?.sysmeta.identifier;
  const cited = (metadataRecord ?? record).sysmeta.identifier;
  const citationUrl = doiUrl(metadata) ?? resolveUrl(cited, base);
  const page: LandingPage = {
    record,
    pid,
    title,
    files,
    fileTotals: totals,
    filePage,
    distribution,
    versions,
    citation: citationOf(metadata, title, citationUrl, String(record.sysmeta.dateUploaded.getUTCFullYear()), base.node?.name),
    citationUrl,
    otherEntities,
    urls,
    dependsOn: (id) => id === pid || id === record.sysmeta.seriesId || id === mdPid || !!model?.ids.has(id),
  };
  if (base.node) page.node = base.node;
  if (metadataRecord) page.metadataRecord = metadataRecord;
  if (metadata) page.metadata = metadata;
  if (model) {
    page.mapRecord = model.mapRecord;
    page.map = model.map;
  }
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
        const orcid = httpUrl(c.orcid);
        if (orcid) p['@id'] = orcid;
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
  const license = httpUrl(md?.license?.url) ?? md?.license?.name;
  if (license) ld.license = license;
  if (md?.temporal.length) ld.temporalCoverage = md.temporal.map((t) => (t.begin === t.end ? t.begin : `${t.begin ?? '..'}/${t.end ?? '..'}`));
  if (md?.spatial.length) {
    ld.spatialCoverage = md.spatial.map((s) => ({
      '@type': 'Place',
      ...(s.description ? { name: s.description } : {}),
      geo: s.west === s.east && s.north === s.south ? { '@type': 'GeoCoordinates', latitude: s.north, longitude: s.west } : { '@type': 'GeoShape', box: `${s.south} ${s.west} ${s.north} ${s.east}` },
    }));
  }
  const files = page.distribution.filter((f) => f.readable && f.href);
  if (files.length) {
    ld.distribution = files.map((f) => ({ '@type': 'DataDownload', '@id': f.href, name: f.name, identifier: f.pid, ...(f.entity?.description ? { description: f.entity.description } : {}), contentUrl: f.href, encodingFormat: f.mediaType ?? f.formatId, contentSize: f.size }));
  }
  if (page.versions.obsoletes) ld.isBasedOn = page.urls.view(page.versions.obsoletes);
  ld.citation = page.citation;
  ld.isAccessibleForFree = true;
  return ld;
}

/**
 * JSON for a `<script type="application/ld+json">` block: `<`, `>` and `&` escaped as JSON
 * unicode escapes, so no field can end the script element or open a comment.
 */
export function jsonLdScript(ld: unknown): string {
  return JSON.stringify(ld, null, 2).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}
