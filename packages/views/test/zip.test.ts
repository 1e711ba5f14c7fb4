import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ZipWriter } from '../src/zip.js';
import { unzip } from './support/unzip.js';

async function collect(gen: AsyncIterable<Buffer> | Iterable<Buffer>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const b of gen) out.push(b);
  return out;
}

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield new TextEncoder().encode(p);
}

describe('streaming zip writer', () => {
  it('writes stored entries (in-memory and streamed, zip64 descriptors when the size is unknown) that read back', async () => {
    const z = new ZipWriter(new Date(Date.UTC(2024, 4, 17, 12, 30, 10)));
    const parts = [
      ...(await collect(z.file('bagit.txt', Buffer.from('BagIt-Version: 0.97\n')))),
      ...(await collect(z.stream('data/known size.csv', chunks('a,b\n', '1,2\n'), 8))),
      ...(await collect(z.stream('data/ünïcode/unknown.bin', chunks('x'.repeat(70000), 'yz')))),
      ...(await collect(z.stream('data/empty', chunks(), 0))),
      ...(await collect(z.finish())),
    ];
    const zip = Buffer.concat(parts);
    expect(z.written).toBe(zip.length);
    const entries = unzip(zip);
    expect([...entries.keys()]).toEqual(['bagit.txt', 'data/known size.csv', 'data/ünïcode/unknown.bin', 'data/empty']);
    expect(entries.get('data/known size.csv')!.data.toString()).toBe('a,b\n1,2\n');
    expect(entries.get('data/ünïcode/unknown.bin')!.data.length).toBe(70002);
    expect(entries.get('data/empty')!.data.length).toBe(0);
    if (existsSync('/usr/bin/unzip')) {
      const dir = mkdtempSync(join(tmpdir(), 'zip-test-'));
      try {
        writeFileSync(join(dir, 'a.zip'), zip);
        expect(execFileSync('/usr/bin/unzip', ['-t', join(dir, 'a.zip')]).toString()).toMatch(/No errors detected/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

});
