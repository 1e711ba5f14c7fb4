import { AccessPolicyCodec, DecodeError, nextRevision, type AccessPolicy, type ApiVersion, type ObjectRecord, type Permission } from '@memberkit/types';
import { fail, parseMultipart, partText, resolveObject, trueResponse, identifierResponse, type CallContext, type Operation } from '@memberkit/core';
import { CnWrites, requireCurrentVersion, requireSerialVersion } from '../cn-writes.js';
import { speaksV2 } from '../resolve.js';
import type { CnServices } from '../services.js';
import type { CnRouteModule } from './route-module.js';

const ACTIONS: readonly Permission[] = ['read', 'write', 'changePermission'];

/**
 * CNAuthorization: isAuthorized, setAccessPolicy, setRightsHolder. Decisions see the
 * caller's equivalent identities and groups (sessions are expanded by the CN's identity store).
 */
export const authorizationRoutes: CnRouteModule = (api, { services, operation, version }) => {
  const writes = new CnWrites(services);
  const id = (c: { req: { param(name: string): string | undefined } }) => c.req.param('id') ?? '';

  // "HTTP 200 when allowed; NotAuthorized otherwise" (401, never 403).
  api.get(
    '/isAuthorized/:id{.+}',
    operation('CNAuthorization.isAuthorized', async (c, ctx, q) => {
      const op = 'CNAuthorization.isAuthorized';
      const action = q.string('action');
      if (!ACTIONS.includes(action as Permission)) throw fail(op, 'InvalidRequest', `action must be read, write or changePermission (got '${action ?? ''}')`, { pid: id(c) });
      await services.objects.authorized(ctx, op, id(c), action as Permission);
      return trueResponse();
    }),
  );

  // setAccessPolicy: "boolean; changes the system metadata modified time".
  api.put(
    '/accessRules/:id{.+}',
    operation('CNAuthorization.setAccessPolicy', async (c, ctx) => {
      const op = 'CNAuthorization.setAccessPolicy';
      const record = await changeable(services, op, ctx, id(c), version);
      const parts = await parseMultipart(op, c);
      const serialVersion = requireSerialVersion(op, partText(parts, 'serialVersion'), record.sysmeta.identifier);
      requireCurrentVersion(op, record, serialVersion);
      const policy = decodePolicy(op, parts.fields.get('accessPolicy'), record.sysmeta.identifier);
      await writes.replace(ctx, op, record, nextRevision(record.sysmeta, { accessPolicy: policy }, services.clock.now()), 'updateSystemMetadata');
      return trueResponse();
    }),
  );

  // setRightsHolder: "identifier of the modified object".
  api.put(
    '/owner/:id{.+}',
    operation('CNAuthorization.setRightsHolder', async (c, ctx) => {
      const op = 'CNAuthorization.setRightsHolder';
      const record = await changeable(services, op, ctx, id(c), version);
      const parts = await parseMultipart(op, c);
      const pid = record.sysmeta.identifier;
      const serialVersion = requireSerialVersion(op, partText(parts, 'serialVersion'), pid);
      requireCurrentVersion(op, record, serialVersion);
      const userId = partText(parts, 'userId')?.trim();
      if (!userId) throw fail(op, 'InvalidRequest', "the 'userId' part must name the new rights holder (a subject)", { pid });
      await writes.replace(ctx, op, record, nextRevision(record.sysmeta, { rightsHolder: userId }, services.clock.now()), 'updateSystemMetadata');
      return identifierResponse(c, pid, version);
    }),
  );
};

/**
 * The record a CN-side access change applies to: the caller needs changePermission on it;
 * an object whose authoritative Member Node speaks v2 is that node's to change, unless
 * cn.changesToV2Objects is "apply" ("the production CN refuses them with NotAuthorized and a
 * message pointing at the authoritative node").
 */
async function changeable(s: CnServices, op: Operation, ctx: CallContext, id: string, version: ApiVersion): Promise<ObjectRecord> {
  const record = await resolveObject(s.metadata, op, id, version);
  const pid = record.sysmeta.identifier;
  if (!s.access.allows(ctx.session, record.sysmeta, 'changePermission')) {
    throw fail(op, 'NotAuthorized', `'${ctx.session.subject}' may not change the access of '${pid}' (changePermission needed)`, { pid: id });
  }
  const authoritative = record.sysmeta.authoritativeMemberNode;
  if (s.config.cn.changesToV2Objects === 'refuse' && authoritative !== undefined && authoritative !== s.config.node.identifier) {
    const registered = await s.nodes.get(authoritative);
    if (registered && speaksV2(registered.node)) {
      const at = registered.node.baseURL.replace(/\/+$/, '');
      throw fail(op, 'NotAuthorized', `'${pid}' belongs to the v2 Member Node ${authoritative}, which is authoritative for its system metadata: change it there (MNStorage.updateSystemMetadata, PUT ${at}/v2/meta); this Coordinating Node does not change v2 objects (cn.changesToV2Objects is "refuse")`, { pid: id });
    }
  }
  return record;
}

function decodePolicy(op: Operation, xml: Uint8Array | undefined, pid: string): AccessPolicy {
  if (xml === undefined) throw fail(op, 'InvalidRequest', "the 'accessPolicy' part is missing", { pid });
  try {
    return AccessPolicyCodec.decode(xml);
  } catch (err) {
    if (DecodeError.is(err)) throw fail(op, 'InvalidRequest', `the accessPolicy part is not a valid AccessPolicy: ${err.message}`, { pid });
    throw err;
  }
}
