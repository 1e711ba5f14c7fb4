import { num, text, uniq, type Node } from './xml.js';
import { emptyMetadata, type ScienceMetadata } from './types.js';
import { creatorFromString } from './names.js';
import { fgdcDate } from './fgdc.js';

/** ORNL DAAC's Mercury metadata (terms v1.0): FGDC's element names in a flatter, namespaced record. */
export function isMercuryFormat(formatId: string): boolean {
  return formatId === 'http://purl.org/ornl/schema/mercury/terms/v1.0';
}

/** Every descendant element by local name, in document order (bounded iterative walk). */
function descendants(root: Node): Map<string, Node[]> {
  const out = new Map<string, Node[]>();
  const stack: Array<{ name?: string; node: Node; depth: number }> = [{ node: root, depth: 0 }];
  while (stack.length > 0) {
    const { name, node, depth } = stack.pop()!;
    if (name !== undefined) {
      const list = out.get(name);
      if (list) list.push(node);
      else out.set(name, [node]);
    }
    if (depth >= 32) continue;
    const children: Array<{ name: string; node: Node; depth: number }> = [];
    for (const [k, v] of Object.entries(node)) {
      if (k.startsWith('@_') || k === '#text' || !Array.isArray(v)) continue;
      for (const c of v) children.push({ name: k, node: c, depth: depth + 1 });
    }
    // Pushed in reverse so that the first child is visited first.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return out;
}

export function readMercury(formatId: string, root: Node): ScienceMetadata {
  const md = emptyMetadata(formatId);
  const all = descendants(root);
  const texts = (name: string): string[] => (all.get(name) ?? []).map(text).filter((s): s is string => !!s);
  const first = (name: string): string | undefined => texts(name)[0];
  const title = first('title');
  if (title) md.title = title;
  for (const o of uniq([...texts('origin'), ...texts('creator')])) md.creators.push(creatorFromString(o));
  const abstract = first('abstract') ?? first('description');
  if (abstract) md.abstract = abstract;
  md.keywords = uniq([...texts('themekey'), ...texts('placekey'), ...texts('keyword')]).filter((k) => !/^none$/i.test(k));
  const begin = fgdcDate(first('begdate'));
  const end = fgdcDate(first('enddate'));
  if (begin || end) md.temporal.push({ ...(begin ? { begin } : {}), ...(end ? { end } : {}) });
  const west = num(first('westbc'));
  const east = num(first('eastbc'));
  const north = num(first('northbc'));
  const south = num(first('southbc'));
  if (west !== undefined && east !== undefined && north !== undefined && south !== undefined) {
    const description = first('site') ?? first('placekey');
    md.spatial.push(description ? { west, east, north, south, description } : { west, east, north, south });
  }
  const pubDate = fgdcDate(first('pubdate'));
  if (pubDate) md.pubDate = pubDate;
  const publisher = first('publish') ?? first('publisher');
  if (publisher) md.publisher = publisher;
  const use = first('useconst');
  if (use && !/^none$/i.test(use)) md.license = { name: use };
  md.alternateIdentifiers = uniq(texts('onlink').filter((u) => /doi\.org\/|^doi:/i.test(u)));
  return md;
}
