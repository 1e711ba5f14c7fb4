// Runs s3rver on 127.0.0.1 in its own process and prints `s3rver listening on <port>`.
// Started with --openssl-legacy-provider: s3rver 3.7 encrypts ListObjectsV2 continuation
// tokens with DES, which OpenSSL 3 only offers in its legacy provider; without it every
// truncated listing (paging) fails with 500.
// Usage: node --openssl-legacy-provider s3rver-child.mjs <directory> [bucket ...]
import S3rver from 's3rver';

const [directory, ...buckets] = process.argv.slice(2);
if (!directory) throw new Error('usage: s3rver-child.mjs <directory> [bucket ...]');
const server = new S3rver({
  port: 0,
  address: '127.0.0.1',
  silent: true,
  directory,
  configureBuckets: (buckets.length > 0 ? buckets : ['bucket']).map((name) => ({ name })),
});
const info = await server.run();
process.stdout.write(`s3rver listening on ${info.port}\n`);
const stop = () => server.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// Exit with the parent (stdin closes when it goes away).
process.stdin.on('end', stop);
process.stdin.resume();
