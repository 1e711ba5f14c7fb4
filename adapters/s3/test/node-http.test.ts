// The node-level HTTP conformance suite (@memberkit/testkit runNodeSuite) against a real
// Member Node whose bytes live in S3: SQLite catalogue + managed S3 storage on s3rver (loopback).
import 'reflect-metadata';
import { afterAll } from 'vitest';
import { runNodeSuite } from '@memberkit/testkit';
import { startS3rver, type S3rverProcess } from './support/s3rver.js';
import { startS3Node, type StartedS3Node } from './support/start-s3-node.js';

let s3: Promise<S3rverProcess> | undefined;
let started: Promise<StartedS3Node> | undefined;
const node = () => (started ??= (async () => {
  s3 = startS3rver();
  const { connection } = await s3;
  // s3rver has no AbortMultipartUpload (405): warnings about aborted uploads are expected here.
  return startS3Node({ ...connection, bucket: 'bucket', onWarning: () => undefined });
})());

afterAll(async () => {
  if (started) await (await started).stop();
  if (s3) await (await s3).stop();
});

runNodeSuite('SQLite catalogue + managed S3 storage (s3rver)', async () => {
  const n = await node();
  return { baseUrl: n.baseUrl, tokens: n.tokens, writerSubject: n.subjects.writer, nodeId: n.nodeId };
});
