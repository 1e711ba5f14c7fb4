import { READERS_FIELD } from '../schema.js';

/**
 * What a caller may see of the index, as SQL over the `docs`/`mv` tables (see compile.ts).
 *
 * Objects: a document is readable when it is public or one of the caller's subjects is among
 * its `_readers`. The readable PIDs of a signed-in caller are one CTE (`rd`), so every use
 * below shares the same parameters, placed first in the statement.
 *
 * Links (`resourceMap`, `documents`, `isDocumentedBy`: rows of `mv` whose `src` is the resource
 * map that stated them) are shown, matched and counted only when
 * 1. the map may describe the object the row belongs to ({@link MAY_DESCRIBE}): whoever can
 *    read it, a stranger's map never adds its documents to someone else's object;
 * 2. the caller may read the map (a private map's identifier, and what it says, stay private);
 * 3. the caller may read the object the value names, when this node holds it (a public
 *    document never reveals a private map, metadata or data object's identifier).
 * These hold in returned values, facet counts and queries (terms, wildcards, `field:*`).
 */
export interface AccessScope {
  /** `WITH ...` to put before the statement ('' when not needed), and its parameters. */
  readonly cte: string;
  readonly cteParams: readonly unknown[];
  /** A condition: the `docs` row `alias` is readable by the caller. */
  readable(alias: string): string;
  /** A condition: the link row `alias` of `mv` is visible to the caller (rules 1-3 above). */
  linkVisible(alias: string): string;
}

/**
 * Rule 1, "who may describe an object": the links a resource map `s` states about an object
 * `x` count only when `x`'s own rightsHolder submitted the map, or when the subjects behind the
 * map may write `x`: its rightsHolder and, when recorded, its submitter (both, because an
 * uploader may name anyone as rights holder of their own map). A subject may write `x` when it
 * is `x`'s rightsHolder or holds write or changePermission on it. Otherwise only the owner's
 * (and authorised writers') maps describe the object. The views' landing pages apply the same
 * rule (mayDescribe in packages/views/src/describe-rule.ts).
 */
export const MAY_DESCRIBE = (s: string, x: string): string => {
  const writes = (subject: string): string =>
    `(${subject} = ${x}."rightsHolder" OR EXISTS (SELECT 1 FROM mv w WHERE w.pid = ${x}.id AND w.field IN ('writePermission', 'changePermission') AND w.value = ${subject}))`;
  return `(${s}."submitter" = ${x}."rightsHolder" OR (${writes(`${s}."rightsHolder"`)} AND (COALESCE(${s}."submitter", '') = '' OR ${writes(`${s}."submitter"`)})))`;
};

/** The scope of a caller with these subjects; undefined: everything is readable (administrators, CNs). */
export function accessScope(readableBy: readonly string[] | undefined): AccessScope {
  let cte = '';
  const cteParams: string[] = [];
  let readable: (alias: string) => string;
  if (!readableBy) readable = () => '1=1';
  else if (readableBy.length === 0) readable = () => '1=0';
  else {
    const isPublic = readableBy.includes('public');
    const others = readableBy.filter((s) => s !== 'public');
    // Unary plus: never drive a plan from this barely selective column (SQLite would).
    const pub = (a: string) => `+${a}."isPublic" = 1`;
    if (others.length === 0) readable = pub;
    else {
      cte = `WITH rd(pid) AS (SELECT r.pid FROM mv r WHERE r.field = '${READERS_FIELD}' AND r.value IN (${others.map(() => '?').join(', ')})) `;
      cteParams.push(...others);
      const own = (a: string) => `${a}.id IN (SELECT pid FROM rd)`;
      readable = isPublic ? (a) => `(${pub(a)} OR ${own(a)})` : own;
    }
  }
  const linkVisible = (m: string): string => {
    const source = `EXISTS (SELECT 1 FROM docs s JOIN docs x ON x.id = ${m}.pid WHERE s.id = ${m}.src AND ${readable('s')} AND ${MAY_DESCRIBE('s', 'x')})`;
    if (!readableBy) return `${m}.src <> '' AND ${source}`;
    const value = `NOT EXISTS (SELECT 1 FROM docs v WHERE v.id = ${m}.value AND NOT COALESCE((${readable('v')}), FALSE))`;
    return `${m}.src <> '' AND ${source} AND ${value}`;
  };
  return { cte, cteParams, readable, linkVisible };
}
