import { sql, type Kysely, type RawBuilder } from 'kysely';
import { inList, isUniqueViolation, num, text, type SqlStore } from '@memberkit/adapter-sql';
import { AdapterError, compareCodePoints } from '@memberkit/types';

/**
 * The rows of the identity tables (identity/schema.ts) and the statements on them. Every
 * subject given here MUST already be normalised (identity/subjects.ts); the store compares
 * subjects exactly. Authorization is the service's business, not the store's.
 */

/** An account: a person's record. */
export interface AccountRecord {
  subject: string;
  givenName: string[];
  familyName: string;
  email: string[];
  verified: boolean;
  created: number;
  updated: number;
}

/** A group with its members and owners (rightsHolders). */
export interface GroupRecord {
  subject: string;
  groupName: string;
  creator: string;
  hasMember: string[];
  rightsHolder: string[];
  created: number;
  updated: number;
}

/** A mapping asked for by `requester` (requestMapIdentity), waiting for `target` to confirm. */
export interface PendingMapping {
  requester: string;
  target: string;
  created: number;
}

/** What listSubjects matches. */
export interface SubjectSearch {
  /** Lower-case substring of the subject, names (or e-mail addresses with `matchEmail`). */
  query?: string;
  /** Also match the query against e-mail addresses. */
  matchEmail: boolean;
  /** Only verified (true) or unverified (false) accounts; groups are never listed then. */
  verified?: boolean;
  start: number;
  count: number;
}

export interface SubjectSearchResult {
  accounts: AccountRecord[];
  groups: GroupRecord[];
  /** Matching accounts and groups in all. */
  total: number;
}

type Row = Record<string, unknown>;

const ESCAPE = '!';

/** A LIKE pattern matching `needle` anywhere (with `!` as the escape character). */
function containsPattern(needle: string): string {
  return `%${needle.replace(/[!%_]/g, (c) => ESCAPE + c)}%`;
}

/** The lower-cased text listSubjects searches (subject, then names). */
export function accountSearchText(a: Pick<AccountRecord, 'subject' | 'givenName' | 'familyName'>): string {
  return [a.subject, ...a.givenName, a.familyName].join('\n').toLowerCase();
}

function accountOf(row: Row): AccountRecord {
  return {
    subject: text(row.subject),
    givenName: JSON.parse(text(row.given_names)) as string[],
    familyName: text(row.family_name),
    email: JSON.parse(text(row.emails)) as string[],
    verified: num(row.verified) === 1,
    created: num(row.created),
    updated: num(row.updated),
  };
}

/** `(a, b)` in canonical order (the smaller by code point first), as equivalences are stored. */
export function canonicalPair(x: string, y: string): [string, string] {
  return compareCodePoints(x, y) <= 0 ? [x, y] : [y, x];
}

const ref = (column: string): RawBuilder<unknown> => sql.ref(column) as RawBuilder<unknown>;


export class IdentityStore {
  constructor(private readonly store: SqlStore) {}

  // ---- accounts -------------------------------------------------------------------------

  /**
   * Inserts an account. 'exists' when an account or a group already has the subject (checked
   * and inserted in one transaction; the primary key settles a race between two inserts).
   */
  async insertAccount(account: AccountRecord): Promise<'created' | 'exists' | 'group-exists'> {
    try {
      return await this.store.write('register account', async (trx) => {
        if (await this.groupExists(trx, account.subject)) return 'group-exists';
        await sql`INSERT INTO mk_cn_accounts (subject, given_names, family_name, emails, verified, created, updated, search_text, email_text)
          VALUES (${account.subject}, ${JSON.stringify(account.givenName)}, ${account.familyName}, ${JSON.stringify(account.email)},
                  ${account.verified ? 1 : 0}, ${account.created}, ${account.updated}, ${accountSearchText(account)}, ${account.email.join('\n').toLowerCase()})`.execute(trx);
        return 'created';
      });
    } catch (e) {
      if (isUniqueViolation(e) || (AdapterError.is(e) && e.kind === 'already-exists')) return 'exists';
      throw e;
    }
  }

  /**
   * Replaces an account's names and e-mail addresses (and its verified flag). False when no
   * account has the subject.
   */
  async updateAccount(account: Pick<AccountRecord, 'subject' | 'givenName' | 'familyName' | 'email' | 'verified' | 'updated'>): Promise<boolean> {
    return this.store.write('update account', async (trx) => {
      const result = await sql`UPDATE mk_cn_accounts SET given_names = ${JSON.stringify(account.givenName)}, family_name = ${account.familyName},
          emails = ${JSON.stringify(account.email)}, verified = ${account.verified ? 1 : 0}, updated = ${account.updated},
          search_text = ${accountSearchText(account)}, email_text = ${account.email.join('\n').toLowerCase()}
        WHERE subject = ${account.subject}`.execute(trx);
      return Number(result.numAffectedRows ?? 0) > 0;
    });
  }

  /** Marks an account verified. False when no account has the subject. */
  async setVerified(subject: string, verified: boolean, now: number): Promise<boolean> {
    return this.store.write('verify account', async (trx) => {
      // MySQL counts only changed rows: read the row rather than trust the affected count.
      const found = await sql<Row>`SELECT subject FROM mk_cn_accounts WHERE subject = ${subject}`.execute(trx);
      if (found.rows.length === 0) return false;
      await sql`UPDATE mk_cn_accounts SET verified = ${verified ? 1 : 0}, updated = ${now} WHERE subject = ${subject}`.execute(trx);
      return true;
    });
  }

  async getAccount(subject: string): Promise<AccountRecord | undefined> {
    return (await this.getAccounts([subject]))[0];
  }

  /** The accounts of `subjects` that exist, in code point order of their subjects. */
  async getAccounts(subjects: readonly string[]): Promise<AccountRecord[]> {
    if (subjects.length === 0) return [];
    return this.store.read('read accounts', async (trx) => {
      const { rows } = await sql<Row>`SELECT * FROM mk_cn_accounts WHERE ${inList(ref('subject'), [...new Set(subjects)])}`.execute(trx);
      return rows.map(accountOf).sort((a, b) => compareCodePoints(a.subject, b.subject));
    });
  }

  // ---- equivalences ---------------------------------------------------------------------

  /**
   * Every subject connected to `subject` through confirmed equivalences, transitively
   * (`subject` included), walked one layer per query.
   */
  async equivalenceClass(subject: string): Promise<Set<string>> {
    const reached = new Set([subject]);
    let frontier = [subject];
    while (frontier.length > 0) {
      const pairs = await this.equivalencesOf(frontier);
      const next: string[] = [];
      for (const [a, b] of pairs) {
        for (const s of [a, b]) {
          if (!reached.has(s)) {
            reached.add(s);
            next.push(s);
          }
        }
      }
      frontier = next;
    }
    return reached;
  }

  /** The equivalences (pairs in canonical order) that involve any of `subjects`. */
  async equivalencesOf(subjects: readonly string[]): Promise<Array<[string, string]>> {
    if (subjects.length === 0) return [];
    const list = [...new Set(subjects)];
    return this.store.read('read equivalences', async (trx) => {
      const { rows } = await sql<Row>`SELECT subject_a, subject_b FROM mk_cn_equivalences WHERE ${inList(ref('subject_a'), list)}
        UNION SELECT subject_a, subject_b FROM mk_cn_equivalences WHERE ${inList(ref('subject_b'), list)}`.execute(trx);
      return rows.map((r) => [text(r.subject_a), text(r.subject_b)] as [string, string]);
    });
  }

  async equivalenceExists(x: string, y: string): Promise<boolean> {
    const [a, b] = canonicalPair(x, y);
    return this.store.read('read equivalence', async (trx) => {
      const { rows } = await sql<Row>`SELECT subject_a FROM mk_cn_equivalences WHERE subject_a = ${a} AND subject_b = ${b}`.execute(trx);
      return rows.length > 0;
    });
  }

  /**
   * Records `x` ≡ `y` (both directions by construction) and drops any mapping request
   * between the two. 'exists' when they were already equivalent.
   */
  async addEquivalence(x: string, y: string, now: number): Promise<'added' | 'exists'> {
    const [a, b] = canonicalPair(x, y);
    try {
      return await this.store.write('map identity', async (trx) => {
        const { rows } = await sql<Row>`SELECT subject_a FROM mk_cn_equivalences WHERE subject_a = ${a} AND subject_b = ${b}`.execute(trx);
        if (rows.length > 0) return 'exists';
        await sql`INSERT INTO mk_cn_equivalences (subject_a, subject_b, created) VALUES (${a}, ${b}, ${now})`.execute(trx);
        await this.dropRequests(trx, a, b);
        return 'added';
      });
    } catch (e) {
      if (isUniqueViolation(e) || (AdapterError.is(e) && e.kind === 'already-exists')) return 'exists';
      throw e;
    }
  }

  /** Removes `x` ≡ `y` (and so its reciprocal). False when there was none. */
  async removeEquivalence(x: string, y: string): Promise<boolean> {
    const [a, b] = canonicalPair(x, y);
    return this.store.write('remove identity mapping', async (trx) => {
      const { rows } = await sql<Row>`SELECT subject_a FROM mk_cn_equivalences WHERE subject_a = ${a} AND subject_b = ${b}`.execute(trx);
      if (rows.length === 0) return false;
      await sql`DELETE FROM mk_cn_equivalences WHERE subject_a = ${a} AND subject_b = ${b}`.execute(trx);
      return true;
    });
  }

  // ---- mapping requests -----------------------------------------------------------------

  /**
   * Records `requester`'s request to be mapped to `target`. Refused (nothing written) with
   * 'mapped' when the two are already equivalent, 'exists' when the same request is pending,
   * 'inverse' when `target` already asked for `requester`.
   */
  async addRequest(requester: string, target: string, now: number): Promise<'added' | 'mapped' | 'exists' | 'inverse'> {
    const [a, b] = canonicalPair(requester, target);
    try {
      return await this.store.write('request identity mapping', async (trx) => {
        const mapped = await sql<Row>`SELECT subject_a FROM mk_cn_equivalences WHERE subject_a = ${a} AND subject_b = ${b}`.execute(trx);
        if (mapped.rows.length > 0) return 'mapped';
        const { rows } = await sql<Row>`SELECT requester FROM mk_cn_pending_maps
          WHERE (requester = ${requester} AND target = ${target}) OR (requester = ${target} AND target = ${requester})`.execute(trx);
        if (rows.some((r) => text(r.requester) === requester)) return 'exists';
        if (rows.length > 0) return 'inverse';
        await sql`INSERT INTO mk_cn_pending_maps (requester, target, created) VALUES (${requester}, ${target}, ${now})`.execute(trx);
        return 'added';
      });
    } catch (e) {
      if (isUniqueViolation(e) || (AdapterError.is(e) && e.kind === 'already-exists')) return 'exists';
      throw e;
    }
  }

  /** The pending requests made by or naming any of `subjects`. */
  async requestsInvolving(subjects: readonly string[]): Promise<PendingMapping[]> {
    if (subjects.length === 0) return [];
    const list = [...new Set(subjects)];
    return this.store.read('read identity mapping requests', async (trx) => {
      const { rows } = await sql<Row>`SELECT requester, target, created FROM mk_cn_pending_maps WHERE ${inList(ref('requester'), list)}
        UNION SELECT requester, target, created FROM mk_cn_pending_maps WHERE ${inList(ref('target'), list)}`.execute(trx);
      return rows
        .map((r) => ({ requester: text(r.requester), target: text(r.target), created: num(r.created) }))
        .sort((x, y) => compareCodePoints(x.requester, y.requester) || compareCodePoints(x.target, y.target));
    });
  }

  /**
   * confirmMapIdentity: turns the request of `requester` naming `target` into an equivalence,
   * in one transaction. False when no such request is pending.
   */
  async confirmRequest(requester: string, target: string, now: number): Promise<boolean> {
    const [a, b] = canonicalPair(requester, target);
    return this.store.write('confirm identity mapping', async (trx) => {
      const { rows } = await sql<Row>`SELECT requester FROM mk_cn_pending_maps WHERE requester = ${requester} AND target = ${target}`.execute(trx);
      if (rows.length === 0) return false;
      await this.dropRequests(trx, a, b);
      const mapped = await sql<Row>`SELECT subject_a FROM mk_cn_equivalences WHERE subject_a = ${a} AND subject_b = ${b}`.execute(trx);
      if (mapped.rows.length === 0) await sql`INSERT INTO mk_cn_equivalences (subject_a, subject_b, created) VALUES (${a}, ${b}, ${now})`.execute(trx);
      return true;
    });
  }

  /** Drops the request of `requester` naming `target`. False when none was pending. */
  async removeRequest(requester: string, target: string): Promise<boolean> {
    return this.store.write('deny identity mapping', async (trx) => {
      const { rows } = await sql<Row>`SELECT requester FROM mk_cn_pending_maps WHERE requester = ${requester} AND target = ${target}`.execute(trx);
      if (rows.length === 0) return false;
      await sql`DELETE FROM mk_cn_pending_maps WHERE requester = ${requester} AND target = ${target}`.execute(trx);
      return true;
    });
  }

  private async dropRequests(trx: Kysely<any>, x: string, y: string): Promise<void> {
    await sql`DELETE FROM mk_cn_pending_maps WHERE (requester = ${x} AND target = ${y}) OR (requester = ${y} AND target = ${x})`.execute(trx);
  }

  // ---- groups ---------------------------------------------------------------------------

  private async groupExists(trx: Kysely<any>, subject: string): Promise<boolean> {
    const { rows } = await sql<Row>`SELECT subject FROM mk_cn_groups WHERE subject = ${subject}`.execute(trx);
    return rows.length > 0;
  }

  /**
   * Inserts a group with its members and owners. 'exists' when a group has the subject,
   * 'account-exists' when an account has it; 'member-is-group' (with the member) when a
   * member is a group (groups do not nest).
   */
  async insertGroup(group: GroupRecord): Promise<{ outcome: 'created' | 'exists' | 'account-exists' } | { outcome: 'member-is-group'; member: string }> {
    try {
      return await this.store.write('create group', async (trx) => {
        const account = await sql<Row>`SELECT subject FROM mk_cn_accounts WHERE subject = ${group.subject}`.execute(trx);
        if (account.rows.length > 0) return { outcome: 'account-exists' as const };
        if (await this.groupExists(trx, group.subject)) return { outcome: 'exists' as const };
        const nested = await this.groupsAmong(trx, group.hasMember);
        if (nested[0] !== undefined) return { outcome: 'member-is-group' as const, member: nested[0] };
        await sql`INSERT INTO mk_cn_groups (subject, group_name, creator, created, updated, search_text)
          VALUES (${group.subject}, ${group.groupName}, ${group.creator}, ${group.created}, ${group.updated}, ${groupSearchText(group)})`.execute(trx);
        await this.insertMembership(trx, group);
        return { outcome: 'created' as const };
      });
    } catch (e) {
      if (isUniqueViolation(e) || (AdapterError.is(e) && e.kind === 'already-exists')) return { outcome: 'exists' };
      throw e;
    }
  }

  /**
   * Replaces a group's name, members and owners (creator and creation date kept). 'missing'
   * when no group has the subject; 'member-is-group' when a member is a group.
   */
  async replaceGroup(group: Pick<GroupRecord, 'subject' | 'groupName' | 'hasMember' | 'rightsHolder' | 'updated'>): Promise<{ outcome: 'updated' | 'missing' } | { outcome: 'member-is-group'; member: string }> {
    return this.store.write('update group', async (trx) => {
      if (!(await this.groupExists(trx, group.subject))) return { outcome: 'missing' as const };
      const nested = await this.groupsAmong(trx, group.hasMember);
      if (nested[0] !== undefined) return { outcome: 'member-is-group' as const, member: nested[0] };
      await sql`UPDATE mk_cn_groups SET group_name = ${group.groupName}, updated = ${group.updated}, search_text = ${groupSearchText(group)}
        WHERE subject = ${group.subject}`.execute(trx);
      await sql`DELETE FROM mk_cn_group_members WHERE group_subject = ${group.subject}`.execute(trx);
      await sql`DELETE FROM mk_cn_group_owners WHERE group_subject = ${group.subject}`.execute(trx);
      await this.insertMembership(trx, group);
      return { outcome: 'updated' as const };
    });
  }

  private async insertMembership(trx: Kysely<any>, group: Pick<GroupRecord, 'subject' | 'hasMember' | 'rightsHolder'>): Promise<void> {
    for (const member of new Set(group.hasMember)) {
      await sql`INSERT INTO mk_cn_group_members (group_subject, member) VALUES (${group.subject}, ${member})`.execute(trx);
    }
    for (const owner of new Set(group.rightsHolder)) {
      await sql`INSERT INTO mk_cn_group_owners (group_subject, owner) VALUES (${group.subject}, ${owner})`.execute(trx);
    }
  }

  /** Which of `subjects` are groups (code point order). */
  private async groupsAmong(trx: Kysely<any>, subjects: readonly string[]): Promise<string[]> {
    if (subjects.length === 0) return [];
    const { rows } = await sql<Row>`SELECT subject FROM mk_cn_groups WHERE ${inList(ref('subject'), [...new Set(subjects)])}`.execute(trx);
    return rows.map((r) => text(r.subject)).sort(compareCodePoints);
  }

  async getGroup(subject: string): Promise<GroupRecord | undefined> {
    return (await this.getGroups([subject]))[0];
  }

  /** The groups of `subjects` that exist, with members and owners, in code point order. */
  async getGroups(subjects: readonly string[]): Promise<GroupRecord[]> {
    if (subjects.length === 0) return [];
    const list = [...new Set(subjects)];
    return this.store.read('read groups', async (trx) => this.groupsWithMembership(trx, list));
  }

  private async groupsWithMembership(trx: Kysely<any>, list: readonly string[]): Promise<GroupRecord[]> {
    if (list.length === 0) return [];
    const groups = await sql<Row>`SELECT * FROM mk_cn_groups WHERE ${inList(ref('subject'), list)}`.execute(trx);
    if (groups.rows.length === 0) return [];
    const members = await sql<Row>`SELECT group_subject, member FROM mk_cn_group_members WHERE ${inList(ref('group_subject'), list)}`.execute(trx);
    const owners = await sql<Row>`SELECT group_subject, owner FROM mk_cn_group_owners WHERE ${inList(ref('group_subject'), list)}`.execute(trx);
    const byGroup = (rows: Row[], col: string) => {
      const map = new Map<string, string[]>();
      for (const r of rows) {
        const g = text(r.group_subject);
        map.set(g, [...(map.get(g) ?? []), text(r[col])]);
      }
      for (const values of map.values()) values.sort(compareCodePoints);
      return map;
    };
    const memberMap = byGroup(members.rows, 'member');
    const ownerMap = byGroup(owners.rows, 'owner');
    return groups.rows
      .map((r) => {
        const subject = text(r.subject);
        return {
          subject,
          groupName: text(r.group_name),
          creator: text(r.creator),
          hasMember: memberMap.get(subject) ?? [],
          rightsHolder: ownerMap.get(subject) ?? [],
          created: num(r.created),
          updated: num(r.updated),
        };
      })
      .sort((a, b) => compareCodePoints(a.subject, b.subject));
  }

  /** The subjects of the groups that have any of `members` as a member (code point order). */
  async groupsWithMember(members: readonly string[]): Promise<string[]> {
    if (members.length === 0) return [];
    return this.store.read('read group membership', async (trx) => {
      const { rows } = await sql<Row>`SELECT DISTINCT group_subject FROM mk_cn_group_members WHERE ${inList(ref('member'), [...new Set(members)])}`.execute(trx);
      return rows.map((r) => text(r.group_subject)).sort(compareCodePoints);
    });
  }

  /** For each of `members`, the groups it is a direct member of. */
  async membershipsOf(members: readonly string[]): Promise<Map<string, string[]>> {
    const map = new Map<string, string[]>();
    if (members.length === 0) return map;
    return this.store.read('read group membership', async (trx) => {
      const { rows } = await sql<Row>`SELECT group_subject, member FROM mk_cn_group_members WHERE ${inList(ref('member'), [...new Set(members)])}`.execute(trx);
      for (const r of rows) {
        const m = text(r.member);
        map.set(m, [...(map.get(m) ?? []), text(r.group_subject)].sort(compareCodePoints));
      }
      return map;
    });
  }

  // ---- listSubjects ---------------------------------------------------------------------

  /**
   * Accounts, then groups, each in code point order of their subjects, matching `search`;
   * the page `start`..`start + count` of that sequence and the total.
   */
  async search(search: SubjectSearch): Promise<SubjectSearchResult> {
    return this.store.read('list subjects', async (trx) => {
      const pattern = search.query === undefined || search.query === '' ? undefined : containsPattern(search.query.toLowerCase());
      const accountWhere = [
        pattern === undefined ? sql`1 = 1` : search.matchEmail ? sql`(search_text LIKE ${pattern} ESCAPE '!' OR email_text LIKE ${pattern} ESCAPE '!')` : sql`search_text LIKE ${pattern} ESCAPE '!'`,
        search.verified === undefined ? sql`1 = 1` : sql`verified = ${search.verified ? 1 : 0}`,
      ];
      const accountCond = sql.join(accountWhere, sql` AND `);
      const countAccounts = num((await sql<Row>`SELECT COUNT(*) AS n FROM mk_cn_accounts WHERE ${accountCond}`.execute(trx)).rows[0]?.n ?? 0);
      // A status filter is about accounts (verified people); groups have none.
      const groupCond = search.verified !== undefined ? sql`1 = 0` : pattern === undefined ? sql`1 = 1` : sql`search_text LIKE ${pattern} ESCAPE '!'`;
      const countGroups = num((await sql<Row>`SELECT COUNT(*) AS n FROM mk_cn_groups WHERE ${groupCond}`.execute(trx)).rows[0]?.n ?? 0);
      const total = countAccounts + countGroups;
      const end = Math.min(search.start + search.count, total);
      let accounts: AccountRecord[] = [];
      let groups: GroupRecord[] = [];
      if (search.start < countAccounts && end > search.start) {
        const n = Math.min(end, countAccounts) - search.start;
        const { rows } = await sql<Row>`SELECT * FROM mk_cn_accounts WHERE ${accountCond} ORDER BY subject LIMIT ${n} OFFSET ${search.start}`.execute(trx);
        accounts = rows.map(accountOf);
      }
      if (end > countAccounts) {
        const from = Math.max(search.start - countAccounts, 0);
        const n = end - countAccounts - from;
        if (n > 0) {
          const { rows } = await sql<Row>`SELECT subject FROM mk_cn_groups WHERE ${groupCond} ORDER BY subject LIMIT ${n} OFFSET ${from}`.execute(trx);
          groups = await this.groupsWithMembership(trx, rows.map((r) => text(r.subject)));
        }
      }
      return { accounts, groups, total };
    });
  }
}

/** The lower-cased text listSubjects searches for a group (subject, then name). */
export function groupSearchText(g: Pick<GroupRecord, 'subject' | 'groupName'>): string {
  return [g.subject, g.groupName].join('\n').toLowerCase();
}
