import type { Group, Person, SubjectInfo } from '@memberkit/types';
import type { SubjectDirectory } from '../ports.js';
import type { AccountRecord, GroupRecord, IdentityStore } from './identity-store.js';
import { normaliseSubject, subjectKind, VERIFIED_USER } from './subjects.js';

/** A group record as the Group type writes it. */
export function groupOf(g: GroupRecord): Group {
  return { subject: g.subject, groupName: g.groupName, hasMember: g.hasMember, rightsHolder: g.rightsHolder };
}

/**
 * The CN's identity store as authorization sees it (SubjectDirectory over the mk_cn_*
 * identity tables). `expand` is the ONE function that says which subjects a caller acts as:
 * every CN authorization decision (isAuthorized, reservations, log visibility, the identity
 * operations themselves) goes through it, so equivalences and groups count everywhere alike.
 */
export class SqlSubjectDirectory implements SubjectDirectory {
  constructor(private readonly identities: IdentityStore) {}

  /**
   * Every subject `subject` acts as: itself (as given and normalised), every subject reachable
   * through confirmed equivalences (transitively), every group any of those is a member of
   * (groups do not nest: createGroup/updateGroup refuse a group as a member), and
   * `verifiedUser` when the subject's own account is verified; each ORCID also as
   * `http://orcid.org/...`. Never `public` or
   * `authenticatedUser`: those are the session's, not the subject's.
   */
  async expand(subject: string): Promise<ReadonlySet<string>> {
    const normalised = normaliseSubject(subject);
    const out = new Set<string>([subject, normalised]);
    if (normalised === '') return out;
    const equivalents = await this.identities.equivalenceClass(normalised);
    for (const s of equivalents) out.add(s);
    for (const g of await this.identities.groupsWithMember([...out])) out.add(g);
    const account = await this.identities.getAccount(normalised);
    if (account?.verified) out.add(VERIFIED_USER);
    // The federation writes ORCIDs as http://orcid.org/... in system metadata and tokens: a
    // caller acts as both spellings of each of its ORCIDs, so either one in an access policy counts.
    for (const s of [...out]) if (subjectKind(s) === 'orcid') out.add(s.replace(/^https:/, 'http:'));
    return out;
  }

  /**
   * SubjectInfo of `subject` with every e-mail address (callers that show it to others redact
   * it): for a person, its record first, then the records of its equivalent identities
   * (transitively), then the groups of any of them; for a group, its members that have
   * accounts and the group; for a subject without an account that is a member of groups, just
   * those groups. Undefined when the store knows nothing of the subject.
   */
  async lookup(subject: string): Promise<SubjectInfo | undefined> {
    const normalised = normaliseSubject(subject);
    if (normalised === '') return undefined;
    const group = await this.identities.getGroup(normalised);
    if (group) {
      const members = await this.identities.getAccounts(group.hasMember);
      return { person: await this.persons(members), group: [groupOf(group)] };
    }
    const equivalents = await this.identities.equivalenceClass(normalised);
    const accounts = await this.identities.getAccounts([...equivalents]);
    const primary = accounts.findIndex((a) => a.subject === normalised);
    if (primary > 0) accounts.unshift(...accounts.splice(primary, 1));
    const groups = await this.identities.getGroups(await this.identities.groupsWithMember([...new Set([subject, ...equivalents])]));
    if (accounts.length === 0 && groups.length === 0) return undefined;
    return { person: await this.persons(accounts), group: groups.map(groupOf) };
  }

  /**
   * Person records of `accounts` (in the given order), each with its direct equivalent
   * identities and direct group memberships, e-mail addresses included.
   */
  async persons(accounts: readonly AccountRecord[]): Promise<Person[]> {
    if (accounts.length === 0) return [];
    const subjects = accounts.map((a) => a.subject);
    const pairs = await this.identities.equivalencesOf(subjects);
    const memberships = await this.identities.membershipsOf(subjects);
    return accounts.map((a) => ({
      subject: a.subject,
      givenName: a.givenName,
      familyName: a.familyName,
      email: a.email,
      isMemberOf: memberships.get(a.subject) ?? [],
      equivalentIdentity: pairs.flatMap(([x, y]) => (x === a.subject ? [y] : y === a.subject ? [x] : [])),
      verified: a.verified,
    }));
  }
}
