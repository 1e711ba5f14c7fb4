import { Readable } from 'node:stream';
import { ChecksumCodec, ObjectListCodec, ObjectLocationListCodec, SystemMetadataCodec, type ObjectList, type ObjectRecord } from '@memberkit/types';
import { contentDisposition, fail, fileNameOf, objectHeaders, resolveObject, xmlPartsResponse, xmlResponse, type CallContext, type Operation } from '@memberkit/core';
import { objectLocations } from '../resolve.js';
import { authoritativeObjects } from '../store/authoritative-listing.js';
import type { CnServices } from '../services.js';
import type { CnRouteModule } from './route-module.js';

/** "NotFound when not present on this node": the CN holds science metadata and resource maps, not data bytes. */
function requireBytesHere(op: Operation, record: ObjectRecord): void {
  if (record.storageKey === '') {
    const pid = record.sysmeta.identifier;
    throw fail(op, 'NotFound', `the Coordinating Node holds no bytes of '${pid}' (only its system metadata): GET /resolve/${encodeURIComponent(pid)} lists the Member Nodes that hold it`, { pid });
  }
}

/** listObjects over the CN's authoritative copies; `nodeId` filters on the authoritative Member Node. */
async function listObjects(s: CnServices, ctx: CallContext, q: { fromDate?: Date; toDate?: Date; formatId?: string; identifier?: string; nodeId?: string; start: number; count: number }): Promise<ObjectList> {
  if (q.nodeId === undefined) return s.objects.listObjects(ctx, q);
  const readableBy = s.access.listingFilter(ctx.session);
  const count = Math.min(q.count, s.config.maxPageSize ?? 10_000);
  const { nodeId, ...rest } = q;
  const page = await authoritativeObjects(s.store, { ...rest, nodeId, count, ...(readableBy ? { readableBy } : {}) });
  const records = await Promise.all(page.pids.map((pid) => s.metadata.get(pid)));
  const items = records.filter((r): r is ObjectRecord => r !== undefined).map((r) => r.sysmeta);
  return {
    start: q.start,
    count: items.length,
    total: page.total,
    objectInfo: items.map((sm) => ({ identifier: sm.identifier, formatId: sm.formatId, checksum: sm.checksum, dateSysMetadataModified: sm.dateSysMetadataModified, size: sm.size })),
  };
}

/**
 * CNRead: get, describe, getSystemMetadata, getChecksum, listObjects over the CN's
 * authoritative copies; resolve; search and the query engines come with part 3
 * (NotImplemented until then).
 */
export const readRoutes: CnRouteModule = (api, { services, operation, version }) => {
  const { objects } = services;
  const id = (c: { req: { param(name: string): string | undefined } }) => c.req.param('id') ?? '';

  // describe is HEAD /object/{id}; Hono dispatches HEAD to the GET route.
  api.get(
    '/object/:id{.+}',
    operation('CNRead.get', async (c, ctx) => {
      if (c.req.method === 'HEAD') {
        const record = await objects.authorized(ctx, 'CNRead.describe', id(c));
        return new Response(null, { status: 200, headers: { ...objectHeaders(record.sysmeta, version), 'Content-Length': String(record.sysmeta.size) } });
      }
      const record = await objects.authorized(ctx, 'CNRead.get', id(c));
      requireBytesHere('CNRead.get', record);
      const headers = { ...objectHeaders(record.sysmeta, version), 'Content-Disposition': contentDisposition(fileNameOf(record.sysmeta)) };
      const content = await objects.read(ctx, record);
      c.req.raw.signal?.addEventListener('abort', () => content.stream.destroy(), { once: true });
      return new Response(Readable.toWeb(content.stream) as ReadableStream, { status: 200, headers: { ...headers, 'Content-Length': String(content.length) } });
    }),
  );

  api.get(
    '/meta/:id{.+}',
    operation('CNRead.getSystemMetadata', async (c, ctx) => {
      const record = await objects.authorized(ctx, 'CNRead.getSystemMetadata', id(c));
      return xmlResponse(SystemMetadataCodec.encode(record.sysmeta, version));
    }),
  );

  // getChecksum: "checksum as recorded in system metadata; no algorithm parameter".
  api.get(
    '/checksum/:id{.+}',
    operation('CNRead.getChecksum', async (c, ctx) => {
      const record = await objects.authorized(ctx, 'CNRead.getChecksum', id(c));
      return xmlResponse(ChecksumCodec.encode(record.sysmeta.checksum, version));
    }),
  );

  api.get(
    '/object',
    operation('CNRead.listObjects', async (c, ctx, q) => {
      const fromDate = q.date('fromDate');
      const toDate = q.date('toDate');
      const formatId = q.string('formatId');
      const identifier = q.string('identifier');
      const nodeId = q.string('nodeId');
      const list = await listObjects(services, ctx, {
        ...(fromDate ? { fromDate } : {}),
        ...(toDate ? { toDate } : {}),
        ...(formatId ? { formatId } : {}),
        ...(identifier ? { identifier } : {}),
        ...(nodeId ? { nodeId } : {}),
        start: q.nonNegativeInt('start', 0),
        count: q.nonNegativeInt('count', 1000),
      });
      return xmlPartsResponse(c, ObjectListCodec.encodeParts(list, version));
    }),
  );

  // resolve: "HTTP 303 with header Location set to the full get URL at the first location;
  // body ObjectLocationList". HEAD answers 307 (a client that follows a 303 with GET would
  // download the object).
  api.get(
    '/resolve/:id{.+}',
    operation('CNRead.resolve', async (c, ctx) => {
      const op = 'CNRead.resolve';
      const record = await resolveObject(services.metadata, op, id(c), version);
      if (!services.access.allows(ctx.session, record.sysmeta, 'read')) {
        throw fail(op, 'NotAuthorized', `'${ctx.session.subject}' may not read '${record.sysmeta.identifier}'`, { pid: id(c) });
      }
      const locations = await objectLocations(services.nodes, record.sysmeta);
      const first = locations.objectLocation[0];
      if (!first) throw fail(op, 'NotFound', `no Member Node known to this Coordinating Node holds a copy of '${record.sysmeta.identifier}' (its authoritative node '${record.sysmeta.authoritativeMemberNode ?? ''}' is not registered and approved, and it has no completed replica)`, { pid: id(c) });
      const status = c.req.method === 'HEAD' ? 307 : 303;
      const body = ObjectLocationListCodec.encode(locations, version);
      return new Response(c.req.method === 'HEAD' ? null : body, { status, headers: { Location: first.url, 'Content-Type': 'text/xml; charset=utf-8' } });
    }),
  );

  const notImplemented = (op: Operation, what: string, later = 'search and query engines come with a later part') =>
    operation(op, async () => {
      throw fail(op, 'NotImplemented', `${what} is not offered by this Coordinating Node yet (${later})`);
    });
  // Harvest and replication scheduling come with part 2: their operations answer NotImplemented
  // with their own detail codes (not an unknown-path NotFound) until then.
  const harvest = 'harvest and replication come with a later part';
  if (version === 'v2') api.post('/synchronize', notImplemented('CNRead.synchronize', 'synchronize', harvest));
  api.put('/replicaNotifications/:id{.+}', notImplemented('CNReplication.setReplicationStatus', 'setReplicationStatus', harvest));
  api.put('/replicaMetadata/:id{.+}', notImplemented('CNReplication.updateReplicationMetadata', 'updateReplicationMetadata', harvest));
  api.put('/replicaPolicies/:id{.+}', notImplemented('CNReplication.setReplicationPolicy', 'setReplicationPolicy', harvest));
  api.get('/replicaAuthorizations/:id{.+}', notImplemented('CNReplication.isNodeAuthorized', 'isNodeAuthorized', harvest));
  api.put('/removeReplicaMetadata/:id{.+}', notImplemented('CNReplication.deleteReplicationMetadata', 'deleteReplicationMetadata', harvest));
  api.get('/search/*', notImplemented('CNRead.search', 'search'));
  api.get('/search', notImplemented('CNRead.search', 'search'));
  api.get('/query', notImplemented('CNRead.listQueryEngines', 'listQueryEngines'));
  api.get('/query/:engine', notImplemented('CNRead.getQueryEngineDescription', 'getQueryEngineDescription'));
  api.get('/query/:engine/*', notImplemented('CNRead.query', 'query'));
  api.post('/query/:engine/*', notImplemented('CNRead.query', 'query'));
};
