import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';

/** A real S3-protocol server (s3rver) on loopback, in a child process, with a temp directory. */
export interface S3rverProcess {
  endpoint: string;
  port: number;
  child: ChildProcess;
  /** Connection options for the adapters (path-style, static s3rver credentials). */
  connection: { endpoint: string; region: string; forcePathStyle: true; credentials: { accessKeyId: string; secretAccessKey: string } };
  /** A client of its own for seeding and inspecting behind an adapter's back. */
  client(): S3Client;
  stop(): Promise<void>;
}

/**
 * Starts s3rver in a child process (see s3rver-child.mjs for why not in-process) on a free
 * port of 127.0.0.1, with `buckets` created (default `bucket`).
 */
export async function startS3rver(buckets: string[] = ['bucket']): Promise<S3rverProcess> {
  const directory = await mkdtemp(join(tmpdir(), 'memberkit-s3rver-'));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', join(import.meta.dirname, 's3rver-child.mjs'), directory, ...buckets], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      const m = /s3rver listening on (\d+)/.exec(output);
      if (m) resolve(Number(m[1]));
    });
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}: ${output}`)));
    setTimeout(() => reject(new Error(`s3rver did not start: ${output}`)), 20_000).unref();
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const connection = { endpoint, region: 'us-east-1', forcePathStyle: true as const, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } };
  const clients: S3Client[] = [];
  return {
    endpoint,
    port,
    child,
    connection,
    client() {
      const c = new S3Client({ ...connection, credentials: { ...connection.credentials } });
      clients.push(c);
      return c;
    },
    async stop() {
      for (const c of clients) c.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
      await rm(directory, { recursive: true, force: true });
    },
  };
}
