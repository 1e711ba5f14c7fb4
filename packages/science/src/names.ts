/**
 * People and organisations named by a single string ("McClure, Sarah (Penn State)",
 * "Peach, A.", "Sarah McClure", "U.S. Geological Survey"): kept as written for search (the
 * federation's index stores creator names as the document writes them) and split into
 * given and family names for citations and JSON-LD.
 */
import type { Creator } from './types.js';

/** Words that make a name an organisation's (matched as whole words, case-insensitive). */
const ORGANIZATION_WORDS = new RegExp(
  '\\b(?:' +
    [
      'university', 'universit[äéàa]t?', 'college', 'institute', 'institut', 'institution', 'laboratory', 'laboratories', 'lab',
      'survey', 'center', 'centre', 'department', 'dept', 'agency', 'service', 'services', 'program', 'programme', 'society',
      'inc', 'llc', 'ltd', 'gmbh', 'corporation', 'corp', 'company', 'association', 'museum', 'commission', 'council', 'office',
      'foundation', 'national', 'network', 'station', 'project', 'consortium', 'group', 'team', 'division', 'administration',
      'ministry', 'bureau', 'observatory', 'archive', 'archives', 'repository', 'library', 'school', 'academy', 'authority',
      'board', 'committee', 'federal', 'state of', 'government', 'district', 'trust', 'partnership', 'initiative', 'lter',
      'usgs', 'noaa', 'nasa', 'nsf', 'epa', 'facility', 'data', 'research', 'study', 'studies', 'system', 'systems',
    ].join('|') +
    ')\\b',
  'i',
);

/** Particles that belong to a family name and make a "Given Family" split ambiguous. */
const PARTICLES = new Set(['van', 'von', 'de', 'der', 'den', 'da', 'di', 'del', 'della', 'la', 'le', 'du', 'dos', 'das', 'ter', 'ten', 'bin', 'al', 'st.']);

/** A word that can be part of a person's name: letters (any script), hyphens, apostrophes, a dot for initials. */
const NAME_WORD = /^[\p{L}][\p{L}\p{M}'’.-]*$/u;

export function looksLikeOrganization(name: string): boolean {
  return ORGANIZATION_WORDS.test(name) || /[0-9&@/]/.test(name);
}

/** "Family, Given" with an optional trailing "(Affiliation)"; undefined when the string is not of that form. */
export function invertedName(written: string): { family: string; given: string; affiliation?: string } | undefined {
  const { rest, affiliation } = splitAffiliation(written);
  const m = /^([^,]+),\s*([^,]+)$/.exec(rest);
  if (!m) return undefined;
  const family = m[1]!.trim();
  const given = m[2]!.trim();
  if (!family || !given) return undefined;
  // "Smith, Jr." or "Acme, Inc." are not "Family, Given".
  if (/^(jr|sr|ii|iii|iv|inc|ltd|llc|gmbh|corp)\.?$/i.test(given)) return undefined;
  return affiliation ? { family, given, affiliation } : { family, given };
}

/**
 * "Given Family" split at the last word when that is unambiguous: two to four words of
 * letters, no family-name particle, not an organisation's name. Undefined otherwise.
 */
export function directName(written: string): { family: string; given: string } | undefined {
  const words = written.trim().split(/\s+/);
  if (words.length < 2 || words.length > 4) return undefined;
  if (!words.every((w) => NAME_WORD.test(w))) return undefined;
  if (words.slice(1).some((w) => PARTICLES.has(w.toLowerCase()))) return undefined;
  if (looksLikeOrganization(written)) return undefined;
  const family = words.at(-1)!;
  // The family name is a word, not an initial ("Sarah M." is not split).
  if (family.replace(/\./g, '').length < 2 || family.endsWith('.')) return undefined;
  return { given: words.slice(0, -1).join(' '), family };
}

function splitAffiliation(written: string): { rest: string; affiliation?: string } {
  const m = /^(.*?)\s*\(([^()]+)\)\s*$/.exec(written);
  if (!m || !m[1]) return { rest: written.trim() };
  return { rest: m[1].trim(), affiliation: m[2]!.trim() };
}

/** A person: display name "Given Family", `written` kept when the document wrote it otherwise. */
export function person(parts: { written?: string; given?: string; family?: string; name?: string; organization?: string }): Creator {
  const display = parts.given && parts.family ? `${parts.given} ${parts.family}` : parts.name ?? parts.family ?? parts.given ?? parts.written ?? '';
  const c: Creator = { name: display, kind: 'person' };
  if (parts.written && parts.written !== display) c.written = parts.written;
  if (parts.given) c.givenName = parts.given;
  if (parts.family) c.familyName = parts.family;
  if (parts.organization) c.organization = parts.organization;
  return c;
}

export function organization(name: string): Creator {
  return { name, kind: 'organization', organization: name };
}

/**
 * A creator named by one string whose kind the document does not say (Dublin Core, Dryad,
 * FGDC origin, DataCite without nameType): "Family, Given (Affiliation)" is a person, an
 * organisation's words make an organisation, "Given Family" a person; else an organisation.
 */
export function creatorFromString(written: string, hint?: 'person' | 'organization'): Creator {
  const s = written.replace(/\s+/g, ' ').trim();
  if (hint === 'organization') return organization(s);
  const inv = invertedName(s);
  if (inv && (hint === 'person' || !looksLikeOrganization(`${inv.family} ${inv.given}`))) {
    return person({ written: s, given: inv.given, family: inv.family, ...(inv.affiliation ? { organization: inv.affiliation } : {}) });
  }
  const { rest, affiliation } = splitAffiliation(s);
  const direct = directName(rest);
  if (direct) return person({ written: s, given: direct.given, family: direct.family, ...(affiliation ? { organization: affiliation } : {}) });
  if (hint === 'person') return person({ written: s, name: rest, ...(affiliation ? { organization: affiliation } : {}) });
  return organization(s);
}

/**
 * A person whose kind the document says (ISO individualName, EML individualName) but whose
 * name is one string: split "Family, Given" or an unambiguous "Given Family", else kept whole.
 */
export function personFromString(written: string, organizationName?: string): Creator {
  const c = creatorFromString(written, 'person');
  if (organizationName && !c.organization) c.organization = organizationName;
  return c;
}
