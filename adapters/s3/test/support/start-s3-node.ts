import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { startNode, type StartedNode } from '../../../../test/helpers/start-node.js';
import { createS3Storage, type S3StorageOptions } from '../../src/index.js';

export type StartedS3Node = StartedNode;

/**
 * The repository's test node (test/helpers/start-node.ts: SQLite catalogue and event log,
 * JWT callers) with managed S3 storage on the given connection, under a fresh prefix.
 */
export function startS3Node(s3: Omit<S3StorageOptions, 'prefix'> & { prefix?: string }, options: { basePath?: string } = {}): Promise<StartedS3Node> {
  return startNode({
    ...options,
    name: 'memberkit S3 test node',
    storage: () => createS3Storage({ prefix: `node-${randomBytes(6).toString('hex')}/`, ...s3 }),
  });
}
