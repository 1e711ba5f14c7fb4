import type { Context, Hono } from 'hono';
import { fail, type ExtensionKit, type NodeExtension } from '@memberkit/core';
import type { ApiVersion } from '@memberkit/types';
import { isResourceMapFormat, type ScienceCache } from '@memberkit/science';
import { bagZip, PACKAGE_TYPES, planBag } from './bag.js';
import { secured } from './response-headers.js';
import { scienceServices, type ScienceServices } from './shared.js';

export interface PackagesOptions {
  science?: ScienceCache;
  /**
   * Recompute each member's own checksum while streaming and abort the download on a mismatch
   * (default false: manifests carry the system metadata checksums the node verified at upload).
   */
  verifyChecksums?: boolean;
  /** Record a `read` event for each member as it is streamed (default true): a package is a download of its members. */
  logMemberReads?: boolean;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * `{type, id}` from the raw path after `/packages/`. The type is an object format id with a
 * `/` in it: clients send it encoded (`application%2Fbagit-097`) or not (`application/bagit-097`).
 */
export function packagePath(c: Context): { type: string; id: string } {
  const raw = new URL(c.req.url).pathname;
  const at = raw.indexOf('/packages/');
  const rest = at >= 0 ? raw.slice(at + '/packages/'.length) : '';
  const segs = rest.split('/');
  const first = decode(segs[0] ?? '');
  if (first.includes('/') || segs.length < 3 || !(`${first}/${decode(segs[1] ?? '')}` in PACKAGE_TYPES)) {
    return { type: first, id: decode(segs.slice(1).join('/')) };
  }
  return { type: `${first}/${decode(segs[1] ?? '')}`, id: decode(segs.slice(2).join('/')) };
}

function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * MNPackage.getPackage: `GET /packages/{packageType}/{id}`, BagIt (application/bagit-097,
 * application/bagit-1.0) as a zip streamed while it is built.
 */
export function createPackagesExtension(options: PackagesOptions = {}): NodeExtension {
  let services: ScienceServices | undefined;
  const logReads = options.logMemberReads ?? true;
  return {
    name: 'packages',
    services: [{ name: 'MNPackage', versions: ['v1', 'v2'] }],
    async open(kit) {
      services = scienceServices(kit, options.science ? { science: options.science } : {});
    },
    async onChange(change) {
      await services?.invalidate(change);
    },
    routes(app: Hono, _version: ApiVersion, kit: ExtensionKit) {
      const op = 'MNPackage.getPackage';
      app.get(
        '/packages/*',
        secured(kit.operation(op, async (c, ctx) => {
          const { type, id } = packagePath(c);
          const packageType = PACKAGE_TYPES[type];
          if (!packageType) throw fail(op, 'InvalidRequest', `package type '${type}' is not supported; this node serializes ${Object.keys(PACKAGE_TYPES).join(', ')}`);
          if (id === '') throw fail(op, 'InvalidRequest', 'an identifier is required: GET /packages/{packageType}/{id}');
          const mapRecord = await kit.objects.authorized(ctx, op, id, 'read');
          if (!isResourceMapFormat(mapRecord.sysmeta.formatId)) {
            throw fail(op, 'InvalidRequest', `'${mapRecord.sysmeta.identifier}' is not a resource map (its format is ${mapRecord.sysmeta.formatId}); getPackage needs the identifier of an OAI-ORE resource map`, { pid: id });
          }
          const s = services ?? scienceServices(kit);
          await s.catchUp();
          const model = await s.packageModel(mapRecord);
          if (!model) throw fail(op, 'InvalidRequest', `the resource map '${mapRecord.sysmeta.identifier}' could not be read as OAI-ORE RDF/XML`, { pid: id });
          const plan = planBag(ctx, kit, model, packageType.bagitVersion);
          if (logReads) await kit.events.record(ctx, 'read', mapRecord.sysmeta.identifier);
          const signal = c.req.raw.signal;
          const source = bagZip(
            kit,
            plan,
            {
              verify: options.verifyChecksums ?? false,
              onMember: logReads ? (m) => kit.events.record(ctx, 'read', m.pid) : undefined,
              onCorrupt: (m, expected, actual) => kit.logger.error({ pid: m.pid, expected, actual }, 'package member does not match its checksum; package download aborted'),
            },
            signal,
          );
          // Pull-based: zip chunks are produced only as the client takes them (plus the small read-ahead below).
          const body = new ReadableStream<Uint8Array>(
            {
              async pull(controller) {
                try {
                  const { value, done } = await source.next();
                  if (done) controller.close();
                  else controller.enqueue(value);
                } catch (err) {
                  kit.logger.error({ err, pid: mapRecord.sysmeta.identifier }, 'package stream failed');
                  controller.error(err);
                }
              },
              async cancel() {
                await source.return(undefined);
              },
            },
            // Up to 1 MiB produced ahead of the socket: disk reads overlap network writes; memory stays flat.
            { highWaterMark: 1 << 20, size: (chunk) => chunk.byteLength },
          );
          return new Response(body, {
            status: 200,
            headers: {
              'Content-Type': 'application/zip',
              'Content-Disposition': contentDisposition(`${plan.baseDir}.zip`),
              'DataONE-FormatId': type,
              // Which members are in the bag depends on the caller.
              'Cache-Control': 'private',
            },
          });
        })),
      );
    },
  };
}
