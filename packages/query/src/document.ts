import { formatById, type ObjectRecord } from '@memberkit/types';
import { plainText, type Creator, type ResourceMap, type ScienceMetadata } from '@memberkit/science';
import { parseSolrDate } from './parser.js';
import { READERS_FIELD } from './schema.js';
import type { IndexDoc, Relation } from './types.js';

const iso = (d: Date | undefined): string | undefined => (d && !Number.isNaN(d.getTime()) ? d.toISOString() : undefined);

/** A date as a science metadata document writes it ('2010', '2010-05', '2010-05-01', full datetimes) in ISO UTC. */
export function normalizeDate(value: string | undefined): string | undefined {
  // No date is longer than this: longer uploaded text is not handed to the date parser.
  if (!value || value.length > 64) return undefined;
  const d = parseSolrDate(value.trim());
  return d ? d.toISOString() : undefined;
}

/**
 * Plain text of an XML document: text nodes and CDATA, entities decoded, whitespace collapsed.
 * Linear in the document's length (a single-pass scanner; the former chain of regexes was
 * quadratic on CDATA holding many `<!--`).
 */
export function xmlText(xml: string): string {
  return plainText(xml);
}

/** Distinct non-empty strings in first-seen order. */
function uniqueOf(values: ReadonlyArray<string | undefined>): string[] {
  return [...new Set(values.filter((v): v is string => !!v))];
}

/** Largest and smallest of many numbers without spreading them as arguments (which overflows the stack). */
function extent(values: readonly number[], pick: (a: number, b: number) => number): number | undefined {
  let out: number | undefined;
  for (const v of values) out = out === undefined ? v : pick(out, v);
  return out;
}

/**
 * The index document of a catalogue record: system metadata fields, access fields, and the
 * science metadata fields when `science` is given (`scienceText`: the document's full text).
 */
export function buildDocument(record: ObjectRecord, science?: ScienceMetadata, scienceText?: string): IndexDoc {
  const sm = record.sysmeta;
  const rules = sm.accessPolicy?.allow ?? [];
  const granted = (p: string) => [...new Set(rules.filter((r) => r.permission.includes(p as never)).flatMap((r) => r.subject))];
  const readers = [...new Set([sm.rightsHolder, ...rules.flatMap((r) => r.subject)])];
  const format = formatById(sm.formatId);
  const doc: IndexDoc = {
    id: sm.identifier,
    seriesId: sm.seriesId,
    formatId: sm.formatId,
    formatType: format?.formatType,
    size: sm.size,
    checksum: sm.checksum.value,
    checksumAlgorithm: sm.checksum.algorithm,
    submitter: sm.submitter,
    rightsHolder: sm.rightsHolder,
    readPermission: granted('read'),
    writePermission: granted('write'),
    changePermission: granted('changePermission'),
    isPublic: rules.some((r) => r.subject.includes('public') && r.permission.length > 0),
    replicationAllowed: sm.replicationPolicy?.replicationAllowed,
    obsoletes: sm.obsoletes,
    obsoletedBy: sm.obsoletedBy,
    archived: sm.archived === true,
    dateUploaded: iso(sm.dateUploaded),
    dateModified: iso(sm.dateSysMetadataModified),
    datasource: sm.originMemberNode,
    authoritativeMN: sm.authoritativeMemberNode,
    replicaMN: (sm.replica ?? []).map((r) => r.replicaMemberNode),
    fileName: sm.fileName,
    mediaType: sm.mediaType?.name,
    serialVersion: sm.serialVersion,
    [READERS_FIELD]: readers,
  };
  const text: string[] = [sm.identifier, sm.fileName ?? ''];
  if (science) {
    const first = science.creators[0];
    const begins = science.temporal.map((t) => normalizeDate(t.begin)).filter((x): x is string => !!x).sort();
    const ends = science.temporal.map((t) => normalizeDate(t.end ?? t.begin)).filter((x): x is string => !!x).sort();
    const sp = science.spatial;
    // Names as the federation's index holds them: as the document writes them ("Peach, A.",
    // "McClure, Sarah (Penn State)", an ISO individualName) and as displayed ("A. Peach").
    const written = (c: Creator): string => c.written ?? c.name;
    Object.assign(doc, {
      title: science.title,
      abstract: science.abstract,
      keywords: science.keywords,
      // CN: EML "Given Sur" or the organisation; ISO, DataCite, Dublin Core, FGDC, Dryad as written.
      origin: uniqueOf(science.creators.flatMap((c) => [written(c), c.name])),
      // CN: the first creator as the document writes it (EML: "Given Sur").
      author: first ? written(first) : undefined,
      authorGivenName: first?.givenName,
      authorSurName: first?.familyName,
      // CN: EML and schema.org give family names, ISO/DataCite/Dublin Core/FGDC/Dryad names as
      // written; both are kept (and the display name), so a query written for either finds it.
      investigator: uniqueOf(science.creators.flatMap((c) => [c.familyName, written(c), c.name])),
      orcid: science.creators.map((c) => c.orcid).filter((x): x is string => !!x),
      originator: uniqueOf(science.creators.map((c) => c.organization)),
      publisher: science.publisher,
      pubDate: normalizeDate(science.pubDate),
      beginDate: begins[0],
      endDate: ends.at(-1),
      northBoundCoord: extent(sp.map((s) => s.north), Math.max),
      southBoundCoord: extent(sp.map((s) => s.south), Math.min),
      eastBoundCoord: extent(sp.map((s) => s.east), Math.max),
      westBoundCoord: extent(sp.map((s) => s.west), Math.min),
      license: science.license?.name ?? science.license?.url,
    });
    // One push per value: spreading 120,000 keywords as arguments overflows the stack.
    text.push(science.title ?? '', science.abstract ?? '');
    for (const k of science.keywords) text.push(k);
    for (const c of science.creators) text.push(`${c.name} ${c.written ?? ''} ${c.organization ?? ''}`);
    for (const p of science.places ?? []) text.push(p);
    for (const s of science.spatial) if (s.description) text.push(s.description);
    if (scienceText) text.push(scienceText);
  }
  doc.text = boundedText(text);
  return doc;
}

/**
 * Characters of a document's free text the full-text index keeps (about 35,000 words; Solr's
 * classic default kept the first 10,000 tokens of a field). Tokenizing an uploaded 6 MB text
 * holds the event loop for seconds (the index is written in one synchronous transaction per
 * document); a quarter of a million characters takes tens of milliseconds.
 */
export const MAX_TEXT_CHARS = 250_000;

/** `parts` joined by spaces, cut at a space once MAX_TEXT_CHARS are reached. */
function boundedText(parts: readonly string[]): string {
  const kept: string[] = [];
  let length = 0;
  for (const part of parts) {
    if (!part) continue;
    if (length + part.length + 1 > MAX_TEXT_CHARS) {
      const room = MAX_TEXT_CHARS - length - 1;
      const cut = part.lastIndexOf(' ', room);
      if (cut > 0) kept.push(part.slice(0, cut));
      break;
    }
    kept.push(part);
    length += part.length + 1;
  }
  return kept.join(' ');
}

/** The relations a resource map contributes to its members (and to itself). */
export function resourceMapRelations(mapPid: string, map: ResourceMap): Relation[] {
  const rels: Relation[] = [];
  const members = new Set(map.aggregated);
  for (const m of map.documents) {
    members.add(m.metadata);
    members.add(m.data);
  }
  for (const pid of members) if (pid !== mapPid) rels.push({ pid, field: 'resourceMap', value: mapPid });
  for (const { metadata, data } of map.documents) {
    rels.push({ pid: metadata, field: 'documents', value: data });
    rels.push({ pid: data, field: 'isDocumentedBy', value: metadata });
  }
  return rels;
}
