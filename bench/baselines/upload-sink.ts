// Baseline: a bare node:http server that writes each request body to disk while computing
// MD5, SHA-1 and SHA-256 (what managed storage computes), fsyncs the file and renames it into
// place: the physical cost of accepting an upload durably, without multipart parsing,
// checks or a catalogue.
// argv: <dir> [fsync: true|false]. Prints `LISTENING <port>`.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const dir = process.argv[2]!;
const fsync = process.argv[3] !== 'false';
mkdirSync(dir, { recursive: true });

const server = createServer((req, res) => {
  void (async () => {
    const name = randomBytes(12).toString('hex');
    const tmp = join(dir, `${name}.part`);
    const handle = await open(tmp, 'wx');
    const hashes = [createHash('md5'), createHash('sha1'), createHash('sha256')];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      for (const h of hashes) h.update(chunk);
      await handle.write(chunk);
    }
    if (fsync) await handle.sync();
    await handle.close();
    await rename(tmp, join(dir, name));
    const digests = hashes.map((h) => h.digest('hex')).join(',');
    res.writeHead(200, { 'Content-Type': 'text/xml; charset=utf-8' });
    res.end(`<d1:identifier xmlns:d1="http://ns.dataone.org/service/types/v1">${name} ${size} ${digests}</d1:identifier>`);
  })().catch((err: unknown) => {
    res.writeHead(500);
    res.end(String(err));
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => console.log(`LISTENING ${(server.address() as AddressInfo).port}`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
