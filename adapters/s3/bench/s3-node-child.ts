// A Member Node (SQLite catalogue + managed S3 storage) in a process of its own, for
// streaming-s3.ts: prints `memberkit s3 node on <port>` and serves until SIGTERM.
// Usage: node --conditions=@memberkit/source --import tsx s3-node-child.ts <s3 endpoint>
import { startS3Node } from '../test/support/start-s3-node.js';

const endpoint = process.argv[2];
if (!endpoint) throw new Error('usage: s3-node-child.ts <s3 endpoint>');
const node = await startS3Node({
  endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  bucket: 'bucket',
  onWarning: (m) => process.stderr.write(`warning: ${m}\n`),
});
process.stdout.write(`writer token ${node.tokens.writer}\nmemberkit s3 node on ${node.port}\n`);
process.on('SIGTERM', () => void node.stop().finally(() => process.exit(0)));
