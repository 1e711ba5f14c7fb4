/**
 * Datasets from folders (wrap mode): which folders of a wrapped archive form a dataset, and the
 * OAI-ORE resource map (RDF/XML) published for each. Backend-neutral: the tree and bucket
 * scanners give the files they catalogued, with the formatId identified from their content.
 *
 * The rule: a folder holding exactly one science metadata document (a METADATA format of the
 * federation's list, or one this node reads) and at least one data file directly beside it
 * (not in a subfolder) is a dataset. The metadata document documents every data file.
 */
import { formatById } from '@memberkit/types';
import { isScienceMetadataFormat } from './metadata.js';
import { isResourceMapFormat } from './ore.js';

export const RESOURCE_MAP_FORMAT = 'http://www.openarchives.org/ore/terms';

/** A catalogued file of a wrapped archive: its path (or key), PID and identified formatId. */
export interface FolderFile {
  path: string;
  pid: string;
  formatId: string | null;
}

/** A folder's dataset: its one metadata document and its data files (PIDs, sorted). */
export interface FolderDataset {
  folder: string;
  metadata: string;
  data: string[];
}

/** The folder of a relative POSIX path ('' for the root). */
export function folderOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

function formatType(formatId: string | null): 'METADATA' | 'RESOURCE' | 'DATA' {
  if (formatId === null) return 'DATA';
  if (isResourceMapFormat(formatId)) return 'RESOURCE';
  const listed = formatById(formatId)?.formatType;
  if (listed === 'METADATA' || isScienceMetadataFormat(formatId)) return 'METADATA';
  return listed === 'RESOURCE' ? 'RESOURCE' : 'DATA';
}

/** True when a file of this format may be a folder's metadata document. */
export function isDatasetMetadataFormat(formatId: string | null): boolean {
  return formatType(formatId) === 'METADATA';
}

/**
 * The dataset of one folder, given the files directly in it (files of subfolders are
 * ignored), or undefined when the folder does not follow the rule. Resource maps already in
 * the folder are neither metadata nor data: a folder holding its own map still gets one.
 */
export function folderDataset(folder: string, files: Iterable<FolderFile>): FolderDataset | undefined {
  const metadata: string[] = [];
  const data: string[] = [];
  for (const f of files) {
    if (folderOf(f.path) !== folder) continue;
    const type = formatType(f.formatId);
    if (type === 'METADATA') metadata.push(f.pid);
    else if (type === 'DATA') data.push(f.pid);
  }
  if (metadata.length !== 1 || data.length === 0) return undefined;
  return { folder, metadata: metadata[0]!, data: [...new Set(data)].sort() };
}

/** A key telling whether two datasets have the same membership (same map content). */
export function datasetMembership(dataset: Pick<FolderDataset, 'metadata' | 'data'>): string {
  return JSON.stringify([dataset.metadata, dataset.data]);
}

const RESOLVE = 'https://cn.dataone.org/cn/v2/resolve/';

function xmlEscape(s: string): string {
  return s.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** The resolve URI DataONE resource maps use for a PID. */
function uriOf(pid: string): string {
  return RESOLVE + encodeURIComponent(pid);
}

/**
 * The OAI-ORE resource map of a dataset, as DataONE clients write them: the map describes an
 * aggregation of the metadata document and the data files; the metadata `cito:documents`
 * each data file, each data file `cito:isDocumentedBy` the metadata; every resource carries
 * its PID as `dcterms:identifier`. Deterministic: the same input gives the same bytes (no
 * timestamps), so a map's checksum changes only with its membership.
 */
export function writeDatasetMap(options: { mapPid: string; metadata: string; data: readonly string[] }): string {
  const { mapPid, metadata, data } = options;
  const map = uriOf(mapPid);
  const aggregation = `${map}#aggregation`;
  const members = [metadata, ...data];
  const lines: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ore="http://www.openarchives.org/ore/terms/"',
    '         xmlns:dcterms="http://purl.org/dc/terms/" xmlns:cito="http://purl.org/spar/cito/">',
    `  <rdf:Description rdf:about="${xmlEscape(map)}">`,
    '    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/ResourceMap"/>',
    `    <dcterms:identifier>${xmlEscape(mapPid)}</dcterms:identifier>`,
    `    <ore:describes rdf:resource="${xmlEscape(aggregation)}"/>`,
    '  </rdf:Description>',
    `  <rdf:Description rdf:about="${xmlEscape(aggregation)}">`,
    '    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/Aggregation"/>',
    `    <ore:isDescribedBy rdf:resource="${xmlEscape(map)}"/>`,
    ...members.map((pid) => `    <ore:aggregates rdf:resource="${xmlEscape(uriOf(pid))}"/>`),
    '  </rdf:Description>',
    `  <rdf:Description rdf:about="${xmlEscape(uriOf(metadata))}">`,
    `    <dcterms:identifier>${xmlEscape(metadata)}</dcterms:identifier>`,
    `    <ore:isAggregatedBy rdf:resource="${xmlEscape(aggregation)}"/>`,
    ...data.map((pid) => `    <cito:documents rdf:resource="${xmlEscape(uriOf(pid))}"/>`),
    '  </rdf:Description>',
  ];
  for (const pid of data) {
    lines.push(
      `  <rdf:Description rdf:about="${xmlEscape(uriOf(pid))}">`,
      `    <dcterms:identifier>${xmlEscape(pid)}</dcterms:identifier>`,
      `    <ore:isAggregatedBy rdf:resource="${xmlEscape(aggregation)}"/>`,
      `    <cito:isDocumentedBy rdf:resource="${xmlEscape(uriOf(metadata))}"/>`,
      '  </rdf:Description>',
    );
  }
  lines.push('</rdf:RDF>', '');
  return lines.join('\n');
}
