import { normalizeChecksumAlgorithm, SubjectInfoCodec, SystemMetadataCodec, type SystemMetadata } from '@memberkit/types';
import { decodeSysmetaPart, fail, parseMultipart, partText, xmlResponse } from '@memberkit/core';
import type { CnRouteModule } from '../http/route-module.js';
import type { CnServices } from '../services.js';
import { identityServiceOf } from '../identity/routes.js';

const ECHO_SYSMETA = 'CNDiagnostic.echoSystemMetadata';

/**
 * echoSystemMetadata's checks: the system metadata must decode against the type (field
 * names, order, values) and name a format of the CN's list and a checksum algorithm the
 * federation uses, as a create on this CN would require.
 */
async function checkedSystemMetadata(services: CnServices, xml: string): Promise<SystemMetadata> {
  const sm = decodeSysmetaPart(ECHO_SYSMETA, xml);
  const pid = { pid: sm.identifier };
  if (!(await services.formats.get(sm.formatId))) {
    throw fail(ECHO_SYSMETA, 'InvalidSystemMetadata', `systemMetadata/formatId '${sm.formatId}' is not in this CN's format list (GET /formats)`, pid);
  }
  if (!normalizeChecksumAlgorithm(sm.checksum.algorithm)) {
    throw fail(ECHO_SYSMETA, 'InvalidSystemMetadata', `systemMetadata/checksum/@algorithm '${sm.checksum.algorithm}' is not supported; use SHA-1, MD5 or SHA-256`, pid);
  }
  return sm;
}

/** CNDiagnostic (v2.0): echoCredentials, echoSystemMetadata; echoIndexedObject comes with the search index. */
export const diagnosticRoutes: CnRouteModule = (api, { services, operation, version }) => {
  // "CNDiagnostic (v2.0)": the API exists on v2 only; on v1 these paths are unknown.
  if (version !== 'v2') return;
  const identity = identityServiceOf(services);

  // "echoCredentials | GET /diag/subject | session only | the subjects and groups parsed from
  // the session": the caller's SubjectInfo as the CN's identity store expands it.
  api.get(
    '/diag/subject',
    operation('CNDiagnostic.echoCredentials', async (_c, ctx) => xmlResponse(SubjectInfoCodec.encode(await identity.echoCredentials(ctx.session), version))),
  );

  // "echoSystemMetadata | POST /diag/sysmeta | sysmeta | a copy of the system metadata, or an
  // exception when it cannot be parsed". The part is `sysmeta` in the API, `sysMeta` in some clients.
  api.post(
    '/diag/sysmeta',
    operation(ECHO_SYSMETA, async (c, ctx) => {
      const body = await parseMultipart(ECHO_SYSMETA, c, ctx.signal ? { signal: ctx.signal } : {});
      const xml = partText(body, 'sysmeta', 'sysMeta');
      if (xml === undefined) throw fail(ECHO_SYSMETA, 'InvalidRequest', "the request has no 'sysmeta' part: send the system metadata as the multipart/form-data part named sysmeta");
      return xmlResponse(SystemMetadataCodec.encode(await checkedSystemMetadata(services, xml), version));
    }),
  );

  // "echoIndexedObject | POST /diag/object": the documents a search index would hold; the CN's
  // search (issue #20, part 3) is not there yet.
  api.post(
    '/diag/object',
    operation('CNDiagnostic.echoIndexedObject', async () => {
      throw fail('CNDiagnostic.echoIndexedObject', 'NotImplemented', 'echoIndexedObject needs the CN search index, which this Coordinating Node does not have yet');
    }),
  );
};
