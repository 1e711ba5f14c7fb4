// nextRevision: the one place serialVersion and dateSysMetadataModified move.
import { describe, expect, it } from 'vitest';
import type { StoredSystemMetadata } from '@memberkit/types';
import { nextRevision, takeFields } from '@memberkit/core';

const at = (ms: number) => new Date(ms);
const record: StoredSystemMetadata = {
  identifier: 'p', formatId: 'text/plain', size: 1, checksum: { algorithm: 'MD5', value: 'x' }, rightsHolder: 'CN=r',
  accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] }, replica: [], serialVersion: 4,
  dateUploaded: at(1000), dateSysMetadataModified: at(5000), submitter: 'CN=s', archived: false,
};

describe('nextRevision', () => {
  it('adds 1 to serialVersion and takes now as dateSysMetadataModified', () => {
    const next = nextRevision(record, { archived: true }, at(9000));
    expect(next).toMatchObject({ archived: true, serialVersion: 5 });
    expect(next.dateSysMetadataModified).toEqual(at(9000));
    expect(record.serialVersion, 'the current record is not touched').toBe(4);
  });

  it('never moves dateSysMetadataModified back, whatever clock now came from', () => {
    expect(nextRevision(record, {}, at(100)).dateSysMetadataModified).toEqual(at(5001));
    expect(nextRevision(record, {}, at(5000)).dateSysMetadataModified).toEqual(at(5001));
  });

  it('keeps a higher serialVersion given (a CN copy several versions ahead)', () => {
    expect(nextRevision(record, {}, at(9000), { serialVersion: 9 }).serialVersion).toBe(9);
    expect(nextRevision(record, {}, at(9000), { serialVersion: 2 }).serialVersion).toBe(5);
  });

  it('removes an optional field whose change is undefined; archived and replica stay', () => {
    const { accessPolicy: _drop, ...withoutPolicy } = record;
    const changes = takeFields(record, { ...withoutPolicy, archived: undefined as unknown as boolean }, ['accessPolicy', 'archived', 'replica']);
    const next = nextRevision(record, changes, at(9000));
    expect('accessPolicy' in next).toBe(false);
    expect(next.archived).toBe(false);
    expect(next.replica).toEqual([]);
  });
});
