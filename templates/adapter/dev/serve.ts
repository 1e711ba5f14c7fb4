// A development node on this adapter: `npm run serve` (PORT, HOST, MEMBERKIT_DEV_DIR,
// MEMBERKIT_DEV_PUBLIC_KEY optional). This file is the composition root, not part of the
// adapter: it may import @memberkit/core (a devDependency); src/ never does.
//
// The node's event log is the embedded SQLite one (core-owned state, kept in
// MEMBERKIT_DEV_DIR, default .memberkit-dev/). YOUR BACKEND: pass your adapter's real
// options below. With the in-memory starting point, objects live until the process ends.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createLogger, createMemberNode, DEFAULT_SCHEDULE, generateTokenKeyPair, mintToken, onStopSignals, publicKeyOf, serveNode, type CoreConfig } from '@memberkit/core';
import { createSqlCatalogue } from '@memberkit/adapter-sql';
import { createTemplateCatalogue, createTemplateStorage } from '../src/index.js';

const port = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? '127.0.0.1';
const basePath = '/mn';
const dataDir = resolve(process.env.MEMBERKIT_DEV_DIR ?? join(import.meta.dirname, '..', '.memberkit-dev'));
const developer = 'CN=memberkit developer,DC=local';

mkdirSync(dataDir, { recursive: true });
// Bearer JWTs for writes: a development key kept in the data folder (plus, optionally, a
// public key in MEMBERKIT_DEV_PUBLIC_KEY whose tokens are accepted too).
const keyFile = join(dataDir, 'dev-jwt-key.pem');
if (!existsSync(keyFile)) writeFileSync(keyFile, generateTokenKeyPair().privateKeyPem, { mode: 0o600 });
const privateKey = readFileSync(keyFile, 'utf8');
const token = await mintToken(privateKey, { subject: developer, ttlSeconds: 24 * 3600 });
const events = createSqlCatalogue({ dialect: 'sqlite', connection: join(dataDir, 'events.db') });
const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'info' });

const config: CoreConfig = {
  node: {
    identifier: 'urn:node:adapter-template-dev',
    name: 'adapter-template development node',
    description: 'A memberkit node on the adapter-template adapter',
    baseURL: `http://localhost:${port}${basePath}`,
    subject: 'CN=urn:node:adapter-template-dev,DC=dataone,DC=org',
    contactSubject: [developer],
    replicate: false,
    synchronize: false,
    schedule: DEFAULT_SCHEDULE,
  },
  access: { administrators: [developer], cnSubjects: [], createPolicy: 'authenticated' },
  auth: { jwt: { keys: [publicKeyOf(privateKey), ...(process.env.MEMBERKIT_DEV_PUBLIC_KEY ? [process.env.MEMBERKIT_DEV_PUBLIC_KEY] : [])] } },
  basePath,
};

const node = await createMemberNode(
  config,
  // YOUR BACKEND: your adapter's options (bucket, connection string, root...).
  { storage: createTemplateStorage(), metadata: createTemplateCatalogue(), eventLog: events.eventLog },
  { logger },
);
const running = await serveNode(node, { port, hostname: host });
const url = `http://localhost:${running.port}${basePath}`;
// Port 0 picked a free port: publish the real one in the Node document.
if (port === 0) config.node.baseURL = url;
console.log(`memberkit node at ${url}`);
console.log(`  capabilities:  curl ${url}/v2/node`);
console.log(`  list objects:  curl '${url}/v2/object?count=10'`);
console.log(`  write with:    curl -H "Authorization: Bearer ${token}" -F pid=... -F object=@file -F sysmeta=@sysmeta.xml ${url}/v2/object`);

const stop = async (): Promise<void> => {
  await running.close();
  process.exit(0);
};
// Ctrl-C under `npm run serve` arrives twice (npm forwards it): onStopSignals stops once.
onStopSignals(stop);
