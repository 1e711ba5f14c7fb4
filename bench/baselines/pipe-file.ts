// Baseline: a bare node:http server piping one file (default stream settings) for any GET.
// argv: <file> [content-type]. Prints `LISTENING <port>`.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';

const file = process.argv[2]!;
const contentType = process.argv[3] ?? 'application/octet-stream';
const size = statSync(file).size;
const server = createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': String(size) });
  if (req.method === 'HEAD') return void res.end();
  pipeline(createReadStream(file), res, () => undefined);
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => console.log(`LISTENING ${(server.address() as AddressInfo).port}`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
