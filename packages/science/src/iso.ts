import { attr, firstUrl, kid, kids, num, orcidOf, path, text, uniq, type Node } from './xml.js';
import { emptyMetadata, type Creator, type ScienceMetadata } from './types.js';
import { organization as organizationCreator, personFromString } from './names.js';

/** ISO 19115 in its ISO 19139 XML encoding (gmd, NOAA and PANGAEA profiles, gmi). */
export function isIsoFormat(formatId: string): boolean {
  return formatId.startsWith('http://www.isotc211.org/2005/gmd') || formatId === 'http://www.isotc211.org/2005/gmi';
}

/** Text of a gco:CharacterString / gmx:Anchor / localised string wrapper. */
function str(node: Node | undefined): string | undefined {
  if (!node) return undefined;
  return text(kid(node, 'CharacterString')) ?? text(kid(node, 'Anchor')) ?? text(path(node, 'PT_FreeText', 'textGroup', 'LocalisedCharacterString')[0]) ?? text(node);
}

const AUTHOR_ROLES = new Set(['author', 'originator', 'principalInvestigator', 'creator', 'coAuthor']);

/**
 * A code list value as ISO documents write it: `author`, or a URL or URI naming it
 * (`http://.../codelists.xml#CI_RoleCode_author`, `...#CI_DateTypeCode_publication`).
 */
export function codeValue(node: Node | undefined): string | undefined {
  const raw = attr(node, 'codeListValue')?.trim() || text(node);
  if (!raw) return undefined;
  const hash = raw.lastIndexOf('#');
  const tail = hash >= 0 ? raw.slice(hash + 1) : /^https?:\/\//i.test(raw) ? raw.slice(raw.lastIndexOf('/') + 1) : raw;
  return tail.replace(/^(?:CI_RoleCode|CI_DateTypeCode|CI_[A-Za-z]+Code)_/, '');
}

function role(p: Node): string | undefined {
  return codeValue(kid(kid(p, 'role'), 'CI_RoleCode'));
}

function party(p: Node): Creator | undefined {
  const individual = str(kid(p, 'individualName'));
  const organization = str(kid(p, 'organisationName'));
  const position = str(kid(p, 'positionName'));
  // As the federation's indexer: an individualName is a person (written "Family, Given" or
  // "Given Family"), an organisationName alone an organisation.
  let c: Creator;
  if (individual) c = personFromString(individual, organization);
  else if (organization) c = organizationCreator(organization);
  else if (position) c = { name: position };
  else return undefined;
  const email = str(path(p, 'contactInfo', 'CI_Contact', 'address', 'CI_Address', 'electronicMailAddress')[0]);
  if (email) c.email = email;
  const anchor = kid(kid(p, 'individualName'), 'Anchor');
  const orcid = orcidOf(attr(anchor, 'href'));
  if (orcid) c.orcid = orcid;
  return c;
}

export function readIso(formatId: string, root: Node): ScienceMetadata {
  const md = emptyMetadata(formatId);
  const info = kids(root, 'identificationInfo').flatMap((i) => [...kids(i, 'MD_DataIdentification'), ...kids(i, 'SV_ServiceIdentification')])[0];
  const citation = kid(kid(info, 'citation'), 'CI_Citation');
  const title = str(kid(citation, 'title'));
  if (title) md.title = title;
  const parties = kids(citation, 'citedResponsibleParty').flatMap((r) => kids(r, 'CI_ResponsibleParty'));
  const authors = parties.filter((p) => AUTHOR_ROLES.has(role(p) ?? ''));
  for (const p of authors.length ? authors : parties.filter((p) => role(p) !== 'publisher')) {
    const c = party(p);
    if (c) md.creators.push(c);
  }
  const publisherParty = parties.find((p) => role(p) === 'publisher');
  const publisher = publisherParty ? str(kid(publisherParty, 'organisationName')) ?? str(kid(publisherParty, 'individualName')) : undefined;
  if (publisher) md.publisher = publisher;
  const abstract = str(kid(info, 'abstract'));
  if (abstract) md.abstract = abstract;
  md.keywords = uniq(path(info, 'descriptiveKeywords', 'MD_Keywords', 'keyword').map(str));
  const extents = path(info, 'extent', 'EX_Extent');
  for (const ex of extents) {
    const description = str(kid(ex, 'description'));
    for (const box of path(ex, 'geographicElement', 'EX_GeographicBoundingBox')) {
      const d = (n: string): number | undefined => num(text(kid(kid(box, n), 'Decimal')) ?? text(kid(box, n)));
      const west = d('westBoundLongitude');
      const east = d('eastBoundLongitude');
      const north = d('northBoundLatitude');
      const south = d('southBoundLatitude');
      if (west === undefined || east === undefined || north === undefined || south === undefined) continue;
      md.spatial.push(description ? { west, east, north, south, description } : { west, east, north, south });
    }
    for (const te of path(ex, 'temporalElement', 'EX_TemporalExtent', 'extent')) {
      for (const period of kids(te, 'TimePeriod')) {
        const begin = text(kid(period, 'beginPosition')) ?? text(path(period, 'begin', 'TimeInstant', 'timePosition')[0]);
        const end = text(kid(period, 'endPosition')) ?? text(path(period, 'end', 'TimeInstant', 'timePosition')[0]);
        if (begin || end) md.temporal.push({ ...(begin ? { begin } : {}), ...(end ? { end } : {}) });
      }
      for (const instant of kids(te, 'TimeInstant')) {
        const at = text(kid(instant, 'timePosition'));
        if (at) md.temporal.push({ begin: at, end: at });
      }
    }
  }
  const constraints = kids(info, 'resourceConstraints').flatMap((r) => [...kids(r, 'MD_LegalConstraints'), ...kids(r, 'MD_Constraints')]);
  for (const c of constraints) {
    const node = kid(c, 'otherConstraints') ?? kid(c, 'useLimitation');
    const name = str(node);
    if (!name) continue;
    const url = attr(kid(node, 'Anchor'), 'href') ?? firstUrl(name);
    md.license = url ? { name, url } : { name };
    break;
  }
  const dates = path(citation, 'date', 'CI_Date');
  const dateOf = (type: string): string | undefined => {
    const d = dates.find((x) => codeValue(kid(kid(x, 'dateType'), 'CI_DateTypeCode') ?? kid(x, 'dateType')) === type);
    const dd = kid(d, 'date');
    return text(kid(dd, 'Date')) ?? text(kid(dd, 'DateTime'));
  };
  const pubDate = dateOf('publication') ?? dateOf('creation') ?? dateOf('revision');
  if (pubDate) md.pubDate = pubDate;
  md.alternateIdentifiers = uniq([...path(citation, 'identifier', 'MD_Identifier', 'code').map(str), ...path(citation, 'identifier', 'RS_Identifier', 'code').map(str), str(kid(root, 'fileIdentifier'))]);
  return md;
}
