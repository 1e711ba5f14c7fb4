// The operation table and the field table: one place for SIDs, permissions and the fields
// each operation may change; what a catalogue's capabilities allow.
import { describe, expect, it } from 'vitest';
import { OVERLAY_FIELDS, type CatalogueAdapter } from '@memberkit/types';
import { acceptsSid, catalogueSupports, changeableFields, OPERATIONS, SYSMETA_FIELDS, type Operation } from '@memberkit/core';

const apply: CatalogueAdapter['apply'] = async () => undefined;
const ops = Object.keys(OPERATIONS) as Operation[];

describe('OPERATIONS', () => {
  it('v1 accepts no SID except where a CN names any identifier; v2 takes "PID or SID" where the reference says id', () => {
    expect(ops.filter((op) => acceptsSid(op, 'v1'))).toEqual(['MNRead.systemMetadataChanged']);
    for (const op of ['MNRead.get', 'MNRead.describe', 'MNRead.getSystemMetadata', 'MNStorage.archive', 'MNStorage.delete', 'MNAuthorization.isAuthorized', 'MNView.view'] as const) {
      expect(acceptsSid(op, 'v2'), op).toBe(true);
    }
    for (const op of ['MNRead.getChecksum', 'MNRead.getReplica', 'MNStorage.update', 'MNStorage.updateSystemMetadata', 'MNStorage.create'] as const) {
      expect(acceptsSid(op, 'v2'), op).toBe(false);
    }
  });

  it('no operation may change a fixed field or a node field directly', () => {
    for (const op of ops) {
      for (const field of OPERATIONS[op].changes) expect(['fixed', 'node'], `${op} changes ${field}`).not.toContain(SYSMETA_FIELDS[field]);
    }
    expect(OPERATIONS['MNStorage.archive'].changes).toEqual(['archived']);
    expect(OPERATIONS['MNStorage.update'].changes).toEqual(['obsoletedBy']);
    expect(OPERATIONS['MNStorage.updateSystemMetadata'].changes).not.toContain('replica');
    expect(OPERATIONS['MNRead.systemMetadataChanged'].changes).toContain('replica');
  });

  it('a writable catalogue supports every operation', () => {
    for (const op of ops) expect(catalogueSupports({ capabilities: { write: true }, apply }, op), op).toBe(true);
  });

  it('a read-only catalogue supports only operations that do not change it', () => {
    const readOnly = { capabilities: { write: false } };
    expect(ops.filter((op) => !catalogueSupports(readOnly, op)).sort()).toEqual(ops.filter((op) => OPERATIONS[op].catalogue.length > 0).sort());
    expect(catalogueSupports({ capabilities: { write: false, overlay: true } }, 'MNStorage.archive'), 'overlay without apply').toBe(false);
  });

  it('an overlay catalogue supports exactly archive, updateSystemMetadata and the CN refresh, on overlay fields', () => {
    const overlay = { capabilities: { write: false, overlay: true }, apply };
    // A Member Node's operations (a Coordinating Node runs on a writable catalogue).
    const supported = ops.filter((op) => op.startsWith('MN') && OPERATIONS[op].catalogue.length > 0 && catalogueSupports(overlay, op)).sort();
    expect(supported).toEqual(['MNRead.systemMetadataChanged', 'MNStorage.archive', 'MNStorage.updateSystemMetadata']);
    for (const op of supported) {
      const fields = changeableFields(op, overlay.capabilities);
      expect(fields.length, op).toBeGreaterThan(0);
      for (const f of fields) expect(OVERLAY_FIELDS as readonly string[], `${op}: ${f}`).toContain(f);
    }
    expect(changeableFields('MNRead.systemMetadataChanged', overlay.capabilities)).toEqual(expect.arrayContaining(['accessPolicy', 'rightsHolder', 'replica', 'archived']));
    expect(changeableFields('MNStorage.updateSystemMetadata', { write: false })).toEqual([]);
  });
});
