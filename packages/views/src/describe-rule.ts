import { authenticatedSession, type AccessControl } from '@memberkit/core';
import type { SystemMetadata } from '@memberkit/types';

type Sysmeta = Pick<SystemMetadata, 'identifier' | 'rightsHolder' | 'accessPolicy' | 'submitter'>;

/**
 * Who may describe an object: whether the resource map (or science metadata document)
 * `describer` may change what the node says about `object` (its landing page, package link,
 * JSON-LD, search relations). Anyone may aggregate public data in a package of their own,
 * but only the object's writers decide how it is described: the describer counts when the
 * subjects behind it may write the object: its rights holder and, when recorded, the subject
 * who submitted it (both, because an uploader may name anyone as rights holder of their own
 * map). A document the object's own rights holder submitted counts too. The object's rights
 * holder always may; administrators too (AccessControl). Search applies the same rule
 * (MAY_DESCRIBE in packages/query/src/sql/access.ts).
 */
export function mayDescribe(access: AccessControl, describer: Sysmeta, object: Sysmeta): boolean {
  if (describer.identifier === object.identifier) return true;
  if (describer.submitter !== undefined && describer.submitter !== '' && describer.submitter === object.rightsHolder) return true;
  const writes = (subject: string | undefined): boolean =>
    subject !== undefined && subject !== '' && (subject === object.rightsHolder || access.allows(authenticatedSession(subject), object, 'write'));
  if (!writes(describer.rightsHolder)) return false;
  return describer.submitter === undefined || describer.submitter === '' || writes(describer.submitter);
}
