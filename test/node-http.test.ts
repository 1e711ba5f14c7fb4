import 'reflect-metadata';
import { afterAll } from 'vitest';
import { runNodeSuite } from '@memberkit/testkit';
import { startNode, type StartedNode } from './helpers/start-node.js';

let started: Promise<StartedNode> | undefined;
const node = () => (started ??= startNode());

afterAll(async () => {
  if (started) await (await started).stop();
});

runNodeSuite('embedded default (SQLite catalogue + filesystem storage)', async () => {
  const n = await node();
  return { baseUrl: n.baseUrl, tokens: n.tokens, writerSubject: n.subjects.writer, nodeId: n.nodeId };
});
