// MNStorage.create of objects larger than the hand-off size, over real HTTP to a node started
// as `memberkit serve`: their digests come from the hashing threads, and the node must still
// check the client's checksum against the bytes ("the checksum MUST match the object", MN API
// MNStorage.create: InvalidSystemMetadata otherwise), serve getChecksum in every algorithm it
// computed, and refuse an object past limits.maxObjectBytes. Every XML body is XSD-validated.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { attr, digestsOf, expectAnyError, expectDocument, NodeClient, patternBytes, TYPES_V1, XmlBodyCollector, type NodeResponse } from '@memberkit/testkit';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from '../../../../test/support/node-process.js';
import { clientSysmeta, createForm } from '../../../../test/support/sysmeta.js';

const MiB = 1 << 20;
const LIMIT = 8 * MiB;

/** The algorithm and value of a getChecksum answer. */
function checksumOf(res: NodeResponse): { algorithm: string | undefined; value: string } {
  const doc = expectDocument(res, 'checksum', TYPES_V1);
  return { algorithm: attr(doc.root, 'algorithm'), value: String(doc.root['#text'] ?? '').trim() };
}

describe('large creates hashed on the threads, over HTTP', () => {
  let dir: string;
  let node: NodeProcess;
  let client: NodeClient;
  const xml = new XmlBodyCollector();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memberkit-hash-http-'));
    writeConfig(dir, { limits: { maxObjectBytes: LIMIT } });
    node = await startNodeProcess(dir);
    client = new NodeClient(node.baseUrl, { writer: await testToken('CN=writer'), admin: await testToken('CN=admin'), other: await testToken('CN=other') }, xml);
  });
  afterEach(() => xml.flush());
  afterAll(async () => {
    await node?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a 5 MiB object declared with its MD5 is accepted; getChecksum gives MD5, SHA-1 and SHA-256 of its bytes; get returns them', async () => {
    const bytes = patternBytes(5 * MiB + 3, 21);
    const digests = digestsOf(bytes);
    const sysmeta = clientSysmeta('large-md5', bytes, { checksum: { algorithm: 'MD5', value: digests.MD5 } });
    const created = await client.post('/v2/object', { as: 'writer', body: createForm('large-md5', bytes, sysmeta) });
    expectDocument(created, 'identifier', TYPES_V1);
    for (const [algorithm, value] of Object.entries(digests)) {
      expect(checksumOf(await client.get(`/v2/checksum/large-md5?checksumAlgorithm=${algorithm}`))).toEqual({ algorithm, value });
    }
    const got = await client.get('/v2/object/large-md5', { rawSuccess: true });
    expect(createHash('sha256').update(got.bytes).digest('hex')).toBe(digests['SHA-256']);
  });

  it('a large object whose declared SHA-256 disagrees with its bytes is refused with InvalidSystemMetadata and not stored', async () => {
    const bytes = patternBytes(3 * MiB, 22);
    const sysmeta = clientSysmeta('large-bad-sum', bytes, { checksum: { algorithm: 'SHA-256', value: createHash('sha256').update('other bytes').digest('hex') } });
    const res = await client.post('/v2/object', { as: 'writer', body: createForm('large-bad-sum', bytes, sysmeta) });
    expect(expectAnyError(res, 400).name).toBe('InvalidSystemMetadata');
    expect(expectAnyError(await client.get('/v2/meta/large-bad-sum', { as: 'admin' }), 404).name).toBe('NotFound');
  });

  it('an object past limits.maxObjectBytes is refused with InsufficientResources; the next large create succeeds', async () => {
    const tooBig = patternBytes(LIMIT + MiB, 23);
    const res = await client.post('/v2/object', { as: 'writer', body: createForm('too-big', tooBig) });
    expect(expectAnyError(res, 413).name).toBe('InsufficientResources');
    const bytes = patternBytes(2 * MiB + 1, 24);
    expectDocument(await client.post('/v2/object', { as: 'writer', body: createForm('after-too-big', bytes) }), 'identifier', TYPES_V1);
    expect(checksumOf(await client.get('/v2/checksum/after-too-big?checksumAlgorithm=MD5')).value).toBe(digestsOf(bytes).MD5);
  });
});
