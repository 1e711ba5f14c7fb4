/**
 * Production nodes serve system metadata with empty optional elements (`<seriesId/>`,
 * `<preferredMemberNode/>`): they read as absent, and the node never writes one.
 */
import { describe, expect, it } from 'vitest';
import * as C from '../src/codecs.js';
import { DecodeError } from '../src/decode-error.js';
import { validateMany } from './xsd.js';

const V2 = 'http://ns.dataone.org/service/types/v2.0';
const BODY = `<identifier>pid</identifier><formatId>text/csv</formatId><size>1</size><checksum algorithm="MD5">abc</checksum><rightsHolder>public</rightsHolder>`;
const doc = (before: string, after: string): string => `<d1:systemMetadata xmlns:d1="${V2}">${before}${BODY}${after}</d1:systemMetadata>`;

describe('empty optional elements read as absent', () => {
  it('a production-style document with every optional element empty decodes, with those fields absent', () => {
    const xml = doc(
      '<serialVersion/>',
      '<submitter/><replicationPolicy replicationAllowed="true"><preferredMemberNode/><preferredMemberNode>urn:node:A</preferredMemberNode><blockedMemberNode> </blockedMemberNode></replicationPolicy>' +
        '<obsoletes/><obsoletedBy></obsoletedBy><archived/><dateUploaded/><dateSysMetadataModified/><originMemberNode/><authoritativeMemberNode>  </authoritativeMemberNode>' +
        '<seriesId xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true"/><fileName/>',
    );
    const sm = C.SystemMetadataCodec.decode(xml);
    for (const field of ['serialVersion', 'submitter', 'obsoletes', 'obsoletedBy', 'archived', 'dateUploaded', 'dateSysMetadataModified', 'originMemberNode', 'authoritativeMemberNode', 'seriesId', 'fileName'] as const) {
      expect(field in sm, field).toBe(false);
    }
    expect(sm.replicationPolicy).toEqual({ replicationAllowed: true, preferredMemberNode: ['urn:node:A'], blockedMemberNode: [] });
  });

  it('re-encoding writes none of them, and the result is schema-valid', () => {
    const sm = C.SystemMetadataCodec.decode(doc('', '<seriesId/><obsoletes/><replicationPolicy><preferredMemberNode/></replicationPolicy>'));
    const out = C.SystemMetadataCodec.encode({ ...sm, replica: [] }, 'v2');
    expect(out).not.toMatch(/<seriesId|<obsoletes|<preferredMemberNode/);
    // A model built in code with empty strings is not written with empty elements either.
    const built = C.SystemMetadataCodec.encode({ ...sm, seriesId: '', obsoletes: '', replica: [], replicationPolicy: { preferredMemberNode: [''], blockedMemberNode: [] } }, 'v2');
    expect(built).not.toMatch(/<seriesId|<obsoletes|<preferredMemberNode/);
    expect(validateMany([out, built]).map((r) => r.errors)).toEqual([[], []]);
  });

  it('required elements stay required: an empty <identifier/>, <formatId/> or <rightsHolder/> is refused', () => {
    for (const el of ['identifier', 'formatId', 'rightsHolder']) {
      const xml = `<d1:systemMetadata xmlns:d1="${V2}">${BODY.replace(new RegExp(`<${el}>[^<]*</${el}>`), `<${el}/>`)}</d1:systemMetadata>`;
      expect(() => C.SystemMetadataCodec.decode(xml), el).toThrow(DecodeError);
    }
  });
});
