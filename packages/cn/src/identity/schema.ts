import type { DialectSql } from '@memberkit/adapter-sql';
import type { CnSchemaArea } from '../store/cn-migrations.js';

/**
 * The CN's identity tables (CNIdentity): accounts of people, confirmed equivalences between
 * two accounts, mapping requests waiting for confirmation, groups with their members and
 * owners. Every subject column holds the normalised subject (identity/subjects.ts). Dates are
 * epoch milliseconds, so every dialect orders them alike.
 */
export const identityArea: CnSchemaArea = {
  name: 'identity',
  migrations: (d: DialectSql) => {
    const s = d.subjectType;
    const long = d.longTextType;
    const t = d.tableSuffix;
    return [
      [
        // A Person: names and e-mail addresses as JSON arrays (in the order given);
        // search_text and email_text: the lower-cased text listSubjects matches a query against.
        `CREATE TABLE mk_cn_accounts (
          subject      ${s} NOT NULL PRIMARY KEY,
          given_names  ${long} NOT NULL,
          family_name  ${long} NOT NULL,
          emails       ${long} NOT NULL,
          verified     SMALLINT NOT NULL,
          created      BIGINT NOT NULL,
          updated      BIGINT NOT NULL,
          search_text  ${long} NOT NULL,
          email_text   ${long} NOT NULL
        )${t}`,
        // One row per equivalence, in canonical order (subject_a < subject_b by code point):
        // removing a mapping removes its reciprocal by construction.
        `CREATE TABLE mk_cn_equivalences (
          subject_a ${s} NOT NULL,
          subject_b ${s} NOT NULL,
          created   BIGINT NOT NULL,
          PRIMARY KEY (subject_a, subject_b)
        )${t}`,
        'CREATE INDEX mk_cn_equivalences_b ON mk_cn_equivalences (subject_b, subject_a)',
        // requestMapIdentity by `requester` naming `target`; confirmMapIdentity by `target`.
        `CREATE TABLE mk_cn_pending_maps (
          requester ${s} NOT NULL,
          target    ${s} NOT NULL,
          created   BIGINT NOT NULL,
          PRIMARY KEY (requester, target)
        )${t}`,
        'CREATE INDEX mk_cn_pending_maps_target ON mk_cn_pending_maps (target, requester)',
        // A Group; `creator` is the subject that called createGroup (it may always update).
        `CREATE TABLE mk_cn_groups (
          subject     ${s} NOT NULL PRIMARY KEY,
          group_name  ${long} NOT NULL,
          creator     ${s} NOT NULL,
          created     BIGINT NOT NULL,
          updated     BIGINT NOT NULL,
          search_text ${long} NOT NULL
        )${t}`,
        `CREATE TABLE mk_cn_group_members (
          group_subject ${s} NOT NULL,
          member        ${s} NOT NULL,
          PRIMARY KEY (group_subject, member)
        )${t}`,
        'CREATE INDEX mk_cn_group_members_member ON mk_cn_group_members (member, group_subject)',
        // The group's rightsHolders: who may update it (besides its creator and administrators).
        `CREATE TABLE mk_cn_group_owners (
          group_subject ${s} NOT NULL,
          owner         ${s} NOT NULL,
          PRIMARY KEY (group_subject, owner)
        )${t}`,
      ],
    ];
  },
};
