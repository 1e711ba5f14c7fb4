import { kid, kids, num, path, text, uniq, type Node } from './xml.js';
import { emptyMetadata, type Creator, type ScienceMetadata } from './types.js';
import { creatorFromString, organization, personFromString } from './names.js';

/** FGDC CSDGM 1998 and its profiles (Biological Data, Shoreline), and the ESRI profile. */
export function isFgdcFormat(formatId: string): boolean {
  return /^FGDC-STD-001(?:\.\d)?-(?:1998|1999)$/.test(formatId) || formatId === 'http://www.esri.com/metadata/esriprof80.dtd';
}

/**
 * An FGDC date (`YYYYMMDD`, `YYYYMM`, `YYYY`) in ISO 8601; "Unknown", "Present" and other
 * words give undefined. ISO dates (ESRI's ArcGIS elements) pass through.
 */
export function fgdcDate(s: string | undefined): string | undefined {
  const t = s?.trim();
  if (!t) return undefined;
  const m = /^(\d{4})(\d{2})?(\d{2})?$/.exec(t);
  if (m) return [m[1], m[2], m[3]].filter(Boolean).join('-');
  return /^\d{4}-\d{2}(-\d{2})?(T[\d:.]+Z?)?$/.test(t) ? t : undefined;
}

/** Keywords FGDC writers put where there is none. */
const NO_KEYWORD = /^(none|n\/a|unknown)$/i;

export function readFgdc(formatId: string, root: Node): ScienceMetadata {
  const md = emptyMetadata(formatId);
  const idinfo = kid(root, 'idinfo');
  if (idinfo) readCsdgm(md, root, idinfo);
  // The ESRI profile as ArcGIS writes it: ISO-like elements under dataIdInfo, alone or beside idinfo.
  const arc = kid(root, 'dataIdInfo');
  if (arc) readArcGis(md, arc);
  return md;
}

function readCsdgm(md: ScienceMetadata, root: Node, idinfo: Node): void {
  const citeinfo = path(idinfo, 'citation', 'citeinfo')[0];
  const title = text(kid(citeinfo, 'title'));
  if (title) md.title = title;
  // origin: one per originator, written "Family, Given", "Given Family" or an organisation's name.
  for (const o of kids(citeinfo, 'origin')) {
    const name = text(o);
    if (name && !NO_KEYWORD.test(name)) md.creators.push(creatorFromString(name));
  }
  const pubDate = fgdcDate(text(kid(citeinfo, 'pubdate')));
  if (pubDate) md.pubDate = pubDate;
  const publisher = text(path(citeinfo, 'pubinfo', 'publish')[0]);
  if (publisher) md.publisher = publisher;
  const abstract = text(path(idinfo, 'descript', 'abstract')[0]);
  if (abstract) md.abstract = abstract;
  const keywords = kid(idinfo, 'keywords');
  md.keywords = uniq([
    ...path(keywords, 'theme', 'themekey').map(text),
    ...path(keywords, 'place', 'placekey').map(text),
    ...path(keywords, 'stratum', 'stratkey').map(text),
    ...path(keywords, 'temporal', 'tempkey').map(text),
  ]).filter((k) => !NO_KEYWORD.test(k));
  const timeinfo = path(idinfo, 'timeperd', 'timeinfo')[0];
  for (const r of kids(timeinfo, 'rngdates')) {
    const begin = fgdcDate(text(kid(r, 'begdate')));
    const end = fgdcDate(text(kid(r, 'enddate')));
    if (begin || end) md.temporal.push({ ...(begin ? { begin } : {}), ...(end ? { end } : {}) });
  }
  for (const d of [...kids(timeinfo, 'sngdate'), ...path(timeinfo, 'mdattim', 'sngdate')]) {
    const at = fgdcDate(text(kid(d, 'caldate')));
    if (at) md.temporal.push({ begin: at, end: at });
  }
  const places = path(keywords, 'place', 'placekey').map(text).filter((p): p is string => !!p && !NO_KEYWORD.test(p));
  for (const b of path(idinfo, 'spdom', 'bounding')) {
    const west = num(text(kid(b, 'westbc')));
    const east = num(text(kid(b, 'eastbc')));
    const north = num(text(kid(b, 'northbc')));
    const south = num(text(kid(b, 'southbc')));
    if (west === undefined || east === undefined || north === undefined || south === undefined) continue;
    const description = text(path(idinfo, 'spdom', 'descgeog')[0]) ?? (places.length === 1 ? places[0] : undefined);
    md.spatial.push(description ? { west, east, north, south, description } : { west, east, north, south });
  }
  const useconst = text(kid(idinfo, 'useconst'));
  if (useconst && !NO_KEYWORD.test(useconst)) {
    const url = /https?:\/\/\S+/.exec(useconst)?.[0]?.replace(/[.,;)]+$/, '');
    md.license = url ? { name: useconst, url } : { name: useconst };
  }
  // Contact of the data set as its organisation when no originator is named.
  if (md.creators.length === 0) {
    const contact = path(idinfo, 'ptcontac', 'cntinfo')[0];
    const c = contactParty(contact);
    if (c) md.creators.push(c);
  }
  const onlink = path(citeinfo, 'onlink').map(text);
  const datsetid = text(path(root, 'idinfo', 'datsetid')[0]);
  md.alternateIdentifiers = uniq([...onlink.filter((u) => !!u && /doi\.org\/|^doi:/i.test(u)), datsetid]);
}

function contactParty(cntinfo: Node | undefined): Creator | undefined {
  if (!cntinfo) return undefined;
  const perp = kid(cntinfo, 'cntperp');
  const orgp = kid(cntinfo, 'cntorgp');
  const person = text(kid(perp, 'cntper')) ?? text(kid(orgp, 'cntper'));
  const org = text(kid(perp, 'cntorg')) ?? text(kid(orgp, 'cntorg'));
  if (person) return personFromString(person, org);
  return org ? organization(org) : undefined;
}

/** ArcGIS role codes (RoleCd value): 006 originator, 008 principal investigator, 011 author, 010 publisher. */
const ARC_AUTHOR_ROLES = new Set(['006', '008', '011']);

function readArcGis(md: ScienceMetadata, info: Node): void {
  const cit = kid(info, 'idCitation');
  if (!md.title) {
    const title = text(kid(cit, 'resTitle'));
    if (title) md.title = title;
  }
  if (!md.abstract) {
    // idAbs is often HTML written as escaped text: tags dropped for reading.
    const abs = text(kid(info, 'idAbs'))?.replace(/<[^>]{0,200}>/g, ' ').replace(/\s+/g, ' ').trim();
    if (abs) md.abstract = abs;
  }
  const parties = kids(cit, 'citRespParty');
  const roleOf = (p: Node): string => {
    const r = kid(kid(p, 'role'), 'RoleCd');
    return (r?.['@_value'] as string | undefined) ?? '';
  };
  if (md.creators.length === 0) {
    for (const p of parties.filter((x) => ARC_AUTHOR_ROLES.has(roleOf(x)))) {
      const ind = text(kid(p, 'rpIndName'));
      const org = text(kid(p, 'rpOrgName'));
      if (ind) md.creators.push(personFromString(ind, org));
      else if (org) md.creators.push(organization(org));
    }
  }
  if (!md.publisher) {
    const pub = parties.find((x) => roleOf(x) === '010');
    const name = text(kid(pub, 'rpOrgName')) ?? text(kid(pub, 'rpIndName'));
    if (name) md.publisher = name;
  }
  if (!md.pubDate) {
    const d = fgdcDate(text(path(cit, 'date', 'pubDate')[0])?.slice(0, 10));
    if (d) md.pubDate = d;
  }
  if (md.keywords.length === 0) {
    md.keywords = uniq([...path(info, 'searchKeys', 'keyword').map(text), ...path(info, 'themeKeys', 'keyword').map(text), ...path(info, 'placeKeys', 'keyword').map(text)]);
  }
  for (const ext of kids(info, 'dataExt')) {
    const description = text(kid(ext, 'exDesc'));
    if (md.spatial.length === 0) {
      for (const b of path(ext, 'geoEle', 'GeoBndBox')) {
        const west = num(text(kid(b, 'westBL')));
        const east = num(text(kid(b, 'eastBL')));
        const north = num(text(kid(b, 'northBL')));
        const south = num(text(kid(b, 'southBL')));
        if (west === undefined || east === undefined || north === undefined || south === undefined) continue;
        md.spatial.push(description ? { west, east, north, south, description } : { west, east, north, south });
      }
    }
    if (md.temporal.length === 0) {
      for (const p of path(ext, 'tempEle', 'TempExtent', 'exTemp', 'TM_Period')) {
        const begin = fgdcDate(text(kid(p, 'tmBegin'))?.slice(0, 10));
        const end = fgdcDate(text(kid(p, 'tmEnd'))?.slice(0, 10));
        if (begin || end) md.temporal.push({ ...(begin ? { begin } : {}), ...(end ? { end } : {}) });
      }
      for (const i of path(ext, 'tempEle', 'TempExtent', 'exTemp', 'TM_Instant')) {
        const at = fgdcDate(text(kid(i, 'tmPosition'))?.slice(0, 10));
        if (at) md.temporal.push({ begin: at, end: at });
      }
    }
  }
  if (!md.license) {
    const use = text(path(info, 'resConst', 'Consts', 'useLimit')[0])?.replace(/<[^>]{0,200}>/g, ' ').replace(/\s+/g, ' ').trim();
    if (use) md.license = { name: use };
  }
}
