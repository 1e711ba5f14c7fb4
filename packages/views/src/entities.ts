import { decodeDocument, decodeEntities, isEmlFormat, type ScienceMetadata } from '@memberkit/science';

/**
 * The data entities a science metadata document describes (EML `dataTable`, `otherEntity`,
 * `spatialRaster`, `spatialVector`, `storedProcedure`, `view`): what a landing page shows
 * beside each file of the package: its name and description, and its variables.
 */
export interface DataEntity {
  kind: string;
  id?: string;
  /** entityName (else physical objectName). */
  name: string;
  description?: string;
  /** physical/objectName: the file name the document gives. */
  objectName?: string;
  /** physical/distribution/online/url: often the object's resolve URL, naming its PID. */
  urls: string[];
  attributes: EntityAttribute[];
}

export interface EntityAttribute {
  name: string;
  label?: string;
  definition?: string;
  unit?: string;
}

const KINDS = new Set(['dataTable', 'otherEntity', 'spatialRaster', 'spatialVector', 'storedProcedure', 'view']);
/** Bounds on what one document contributes to a page. */
export const MAX_ENTITIES = 500;
export const MAX_ATTRIBUTES = 300;
const MAX_TEXT = 2000;
/**
 * Largest EML read here for its entities. This reader runs on the main thread (the science
 * readers do not expose entities yet): it is one linear pass with no regex over the document,
 * only over a document the science reader has already accepted within its budgets, and the
 * result is cached per document version; past this size the page goes without descriptions.
 */
export const MAX_ENTITY_DOCUMENT_BYTES = 4 * 1024 * 1024;

/** Entities the science reader gives (`ScienceMetadata.entities`, when it has them), checked. */
export function entitiesFromMetadata(md: ScienceMetadata): DataEntity[] | undefined {
  const raw = (md as ScienceMetadata & { entities?: unknown }).entities;
  if (!Array.isArray(raw)) return undefined;
  const out: DataEntity[] = [];
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, MAX_TEXT) : undefined);
  for (const e of raw.slice(0, MAX_ENTITIES) as Array<Record<string, unknown>>) {
    if (!e || typeof e !== 'object') continue;
    const name = str(e.name) ?? str(e.entityName) ?? str(e.objectName);
    if (!name) continue;
    const entity: DataEntity = { kind: str(e.kind) ?? 'entity', name, urls: Array.isArray(e.urls) ? (e.urls as unknown[]).map(str).filter((u): u is string => !!u).slice(0, 10) : [], attributes: [] };
    const id = str(e.id);
    const description = str(e.description) ?? str(e.entityDescription);
    const objectName = str(e.objectName);
    if (id) entity.id = id;
    if (description) entity.description = description;
    if (objectName) entity.objectName = objectName;
    for (const a of (Array.isArray(e.attributes) ? e.attributes : []).slice(0, MAX_ATTRIBUTES) as Array<Record<string, unknown>>) {
      const an = a && typeof a === 'object' ? str(a.name) : undefined;
      if (!an) continue;
      const attr: EntityAttribute = { name: an };
      for (const k of ['label', 'definition', 'unit'] as const) {
        const v = str(a[k]);
        if (v) attr[k] = v;
      }
      entity.attributes.push(attr);
    }
    out.push(entity);
  }
  return out;
}

type Field = 'name' | 'description' | 'objectName' | 'url' | 'attrName' | 'attrLabel' | 'attrDefinition' | 'unit';

/**
 * The entities of an EML document, in one linear pass over its text (tags, comments, CDATA,
 * processing instructions; quoted attribute values may hold `>`). Namespace prefixes are
 * ignored: EML's dataset children are unqualified. Unclosed or stray tags end nothing worse
 * than a missing field.
 */
export function readEmlEntities(xml: string): DataEntity[] {
  const out: DataEntity[] = [];
  const stack: string[] = [];
  let entity: DataEntity | undefined;
  let entityDepth = -1;
  let attr: EntityAttribute | undefined;
  let attrDepth = -1;
  let field: Field | undefined;
  let fieldDepth = -1;
  let text: string[] = [];
  let textLength = 0;
  const n = xml.length;
  let i = 0;

  const addText = (s: string): void => {
    if (!field || textLength >= MAX_TEXT) return;
    text.push(s);
    textLength += s.length;
  };
  const fieldFor = (name: string, depth: number): Field | undefined => {
    if (!entity) return undefined;
    const rel = stack.slice(entityDepth + 1, depth);
    const parent = rel[rel.length - 1];
    if (attr) {
      if (parent === 'attribute' && depth === attrDepth + 1) {
        if (name === 'attributeName') return 'attrName';
        if (name === 'attributeLabel') return 'attrLabel';
        if (name === 'attributeDefinition') return 'attrDefinition';
      }
      if (name === 'standardUnit' || name === 'customUnit') return 'unit';
      return undefined;
    }
    if (rel.length === 0) {
      if (name === 'entityName') return 'name';
      if (name === 'entityDescription') return 'description';
    }
    if (rel.length === 1 && rel[0] === 'physical' && name === 'objectName') return 'objectName';
    if (name === 'url' && rel[0] === 'physical' && parent === 'online') return 'url';
    return undefined;
  };
  const closeField = (): void => {
    if (!field || !entity) return;
    const value = decodeEntities(text.join('')).replace(/\s+/g, ' ').trim().slice(0, MAX_TEXT);
    if (value !== '') {
      if (field === 'name') entity.name ||= value;
      else if (field === 'description') entity.description ??= value;
      else if (field === 'objectName') entity.objectName ??= value;
      else if (field === 'url') {
        if (entity.urls.length < 10) entity.urls.push(value);
      } else if (attr) {
        if (field === 'attrName') attr.name ||= value;
        else if (field === 'attrLabel') attr.label ??= value;
        else if (field === 'attrDefinition') attr.definition ??= value;
        else if (field === 'unit') attr.unit ??= value;
      }
    }
    field = undefined;
    fieldDepth = -1;
    text = [];
    textLength = 0;
  };

  while (i < n) {
    const lt = xml.indexOf('<', i);
    if (lt < 0) break;
    if (field && lt > i) addText(xml.slice(i, Math.min(lt, i + MAX_TEXT)));
    if (xml.startsWith('<!--', lt)) {
      const end = xml.indexOf('-->', lt + 4);
      i = end < 0 ? n : end + 3;
      continue;
    }
    if (xml.startsWith('<![CDATA[', lt)) {
      const end = xml.indexOf(']]>', lt + 9);
      const stop = end < 0 ? n : end;
      // Raw text: entity-decoded later with the rest, so escape its ampersands.
      if (field) addText(xml.slice(lt + 9, Math.min(stop, lt + 9 + MAX_TEXT)).replace(/&/g, '&amp;'));
      i = end < 0 ? n : end + 3;
      continue;
    }
    if (xml.startsWith('<?', lt) || xml.startsWith('<!', lt)) {
      const end = xml.indexOf('>', lt + 2);
      i = end < 0 ? n : end + 1;
      continue;
    }
    // A tag: find its end, stepping over quoted attribute values.
    let j = lt + 1;
    let quote = 0;
    while (j < n) {
      const c = xml.charCodeAt(j);
      if (quote) {
        if (c === quote) quote = 0;
      } else if (c === 34 || c === 39) quote = c;
      else if (c === 62) break;
      j++;
    }
    const tag = xml.slice(lt + 1, j);
    i = j + 1;
    const closing = tag.startsWith('/');
    const selfClosing = !closing && tag.endsWith('/');
    const nameEnd = tag.search(/[\s/>]|$/);
    const qname = closing ? tag.slice(1).trim() : tag.slice(0, nameEnd === 0 ? tag.length : nameEnd);
    const name = qname.slice(qname.indexOf(':') + 1);
    if (closing) {
      // Pop to the matching element (tolerates a stray close tag).
      const at = stack.lastIndexOf(name);
      if (at < 0) continue;
      while (stack.length > at) {
        const depth = stack.length - 1;
        if (depth === fieldDepth) closeField();
        if (depth === attrDepth && entity && attr) {
          if (attr.name && entity.attributes.length < MAX_ATTRIBUTES) entity.attributes.push(attr);
          attr = undefined;
          attrDepth = -1;
        }
        if (depth === entityDepth && entity) {
          entity.name ||= entity.objectName ?? '';
          if (entity.name) out.push(entity);
          entity = undefined;
          entityDepth = -1;
        }
        stack.pop();
      }
      continue;
    }
    if (selfClosing) continue;
    const depth = stack.length;
    stack.push(name);
    if (!entity && out.length < MAX_ENTITIES && KINDS.has(name) && stack[depth - 1] === 'dataset') {
      entity = { kind: name, name: '', urls: [], attributes: [] };
      const id = /\bid\s*=\s*("([^"]*)"|'([^']*)')/.exec(tag);
      const value = id ? decodeEntities(id[2] ?? id[3] ?? '').trim() : '';
      if (value) entity.id = value.slice(0, MAX_TEXT);
      entityDepth = depth;
    } else if (entity && !attr && name === 'attribute' && stack[depth - 1] === 'attributeList') {
      attr = { name: '' };
      attrDepth = depth;
    } else if (!field) {
      const f = fieldFor(name, depth);
      if (f) (field = f), (fieldDepth = depth);
    }
  }
  return out;
}

/** The entities of a science metadata document: from the reader when it gives them, else (EML) read here. */
export function entitiesOf(md: ScienceMetadata, formatId: string, bytes: () => Promise<Uint8Array | undefined>): Promise<DataEntity[]> {
  const given = entitiesFromMetadata(md);
  if (given) return Promise.resolve(given);
  if (!isEmlFormat(formatId)) return Promise.resolve([]);
  return bytes().then((b) => {
    if (!b || b.byteLength > MAX_ENTITY_DOCUMENT_BYTES) return [];
    const xml = decodeDocument(b, MAX_ENTITY_DOCUMENT_BYTES);
    return xml ? readEmlEntities(xml) : [];
  });
}

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
