// What a node serves from a data folder, as plain JSON: the legacy folder test compares what
// a node of today serves from the fixture with what the node that wrote it served (expected.json).
import { createHash } from 'node:crypto';
import { MemberNodeClient } from '@memberkit/client';
import { DataONEException } from '@memberkit/types';

/** Every PID of the fixture (README.md of fixtures/legacy-embedded-v0 says what each is). */
export const LEGACY_PIDS = ['v1', 'v2', 'v3', 'archived-1', 'private-1', 'shared/one%20two', 'plain-ü'] as const;

export interface LegacyCallers {
  admin: MemberNodeClient;
  writer: MemberNodeClient;
  friend: MemberNodeClient;
  anonymous: MemberNodeClient;
}

async function outcome<T>(call: () => Promise<T>): Promise<T | { error: string; detailCode?: string }> {
  try {
    return await call();
  } catch (e) {
    if (DataONEException.is(e)) return { error: e.exceptionName, ...(e.detailCode ? { detailCode: e.detailCode } : {}) };
    throw e;
  }
}

const md5 = async (stream: AsyncIterable<Uint8Array>): Promise<string> => {
  const hash = createHash('md5');
  for await (const chunk of stream) hash.update(chunk);
  return hash.digest('hex');
};

/**
 * The answers of the log, listings, system metadata, bytes and series resolution, in an order
 * that logs no event before the log is read (reads are logged).
 */
export async function observeLegacyNode(c: LegacyCallers): Promise<Record<string, unknown>> {
  const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
  const log = await c.admin.getLogRecords({});
  const out: Record<string, unknown> = {
    log: json(log),
    logRead: json(await c.admin.getLogRecords({ event: 'read' })),
    logPage: json(await c.admin.getLogRecords({ start: 3, count: 4 })),
    listAdmin: json(await c.admin.listObjects({})),
    listAnonymous: json(await c.anonymous.listObjects({})),
    listFriend: json(await c.friend.listObjects({})),
    listPage: json(await c.admin.listObjects({ start: 2, count: 3 })),
    listFormat: json(await c.admin.listObjects({ formatId: 'text/csv' })),
  };
  for (const pid of LEGACY_PIDS) {
    out[`sysmeta ${pid}`] = json(await outcome(() => c.admin.getSystemMetadata(pid)));
    out[`anonymous sysmeta ${pid}`] = json(await outcome(async () => (await c.anonymous.getSystemMetadata(pid)).identifier));
    out[`bytes ${pid}`] = await outcome(async () => md5((await c.admin.get(pid)).stream));
  }
  out['series-1'] = json(await outcome(async () => (await c.anonymous.getSystemMetadata('series-1')).identifier));
  out['series-1 bytes'] = await outcome(async () => md5((await c.anonymous.get('series-1')).stream));
  return out;
}
