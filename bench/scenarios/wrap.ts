// Wrap mode over an existing tree of N files (full run 100,000, 1-8 KiB each): time from
// `memberkit serve` to the first listObjects answer and to the first non-empty one, against
// the same for an empty managed node; the background checksum scan in MB/s against
// `sha1sum` over the same files (page cache warm for both), and the CPU per file of each.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { reapedChildrenCpuMs, type Subject } from '../lib/common.js';
import type { Scenario } from '../lib/scenario.js';

const MB = 1e6;

async function firstList(baseUrl: string, nonEmpty: boolean, timeoutMs: number): Promise<number> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${baseUrl}/v2/object?count=1`).catch(() => undefined);
    if (res?.status === 200) {
      const body = await res.text();
      if (!nonEmpty || !/count="0"/.test(body)) return performance.now();
    }
    if (Date.now() > until) throw new Error('listObjects did not answer in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * durationMs and cpuMs (the process's CPU over the scan, every thread) of the node's "wrap scan
 * finished" log line, waited for up to `timeoutMs`. A node without cpuMs in that line (an older
 * --compare ref) gives NaN for it.
 */
async function scanFigures(output: () => string, timeoutMs: number): Promise<{ durationMs: number; cpuMs: number }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const line = output().split('\n').find((l) => l.includes('wrap scan finished'));
    const m = line === undefined ? null : /"durationMs":([\d.]+)/.exec(line);
    if (m) return { durationMs: Number(m[1]), cpuMs: Number(/"cpuMs":([\d.]+)/.exec(line!)?.[1] ?? NaN) };
    if (Date.now() > until) throw new Error('the node logged no "wrap scan finished" line with its durationMs');
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const wrap: Scenario = {
  name: 'wrap',
  description: 'wrap mode: time to the first listObjects over an existing tree; checksum scan MB/s vs sha1sum',
  cost: (o, subjects) => {
    const k = o.wrapFiles / 100_000;
    // The tree is written once and removed at the end (~30 s per 100,000 files together); each
    // round a fresh node scans all of it (~50 s per 100,000 on 2 busy cores).
    return { seconds: 30 * k + o.repeat * ((subjects - 1) * (3 + 50 * k) + 3 + 5 * k), what: `a tree of ${o.wrapFiles} files written once; per round a fresh node wraps it, and an empty node start + sha1sum` };
  },
  async run(ctx) {
    const { options } = ctx;
    const n = options.wrapFiles;
    const tree = ctx.folder('tree');
    const block = randomBytes(8192);
    let bytes = 0;
    const perDir = 1000;
    for (let i = 0; i < n; i++) {
      const sub = join(tree, `d${String(Math.floor(i / perDir)).padStart(4, '0')}`);
      if (i % perDir === 0) mkdirSync(sub, { recursive: true });
      const size = 1024 * ((i % 8) + 1);
      block.writeUInt32LE(i, 0); // distinct contents
      writeFileSync(join(sub, `f${String(i).padStart(6, '0')}.dat`), block.subarray(0, size));
      bytes += size;
    }
    // Wrap mode only reads the tree: every round's node wraps the same files, on a data folder of its own.
    const wrapNode = async (subject: Subject): Promise<number[]> => {
      const started = performance.now();
      const node = await ctx.startNode(subject, ctx.folder(`wrap-${subject}`), { storage: { type: 'tree', root: tree }, wrap: { rightsHolder: 'CN=archive' }, log: { level: 'info' } });
      try {
        const first = (await firstList(node.baseUrl, false, 60_000)) - started;
        const firstNonEmpty = (await firstList(node.baseUrl, true, 600_000)) - started;
        // The scan's own figure: its log line comes once every batch is committed (after the
        // removals and dataset maps that follow the listing), so wait for it rather than read another line's.
        const scan = await scanFigures(() => node.output(), 1_800_000);
        const total = /total="(\d+)"/.exec(await fetch(`${node.baseUrl}/v2/object?count=0`).then((r) => r.text()))?.[1];
        if (Number(total) < n) throw new Error(`the wrap scan finished with ${total} objects catalogued, not ${n}`);
        return [first, firstNonEmpty, bytes / MB / (scan.durationMs / 1000), (scan.cpuMs * 1000) / n];
      } finally {
        await node.stop();
      }
    };
    // The baselines: an empty managed node, same process start; sha1sum over the same files.
    const baselines = async (): Promise<number[]> => {
      const emptyStart = performance.now();
      const empty = await ctx.startNode('memberkit', ctx.folder('empty'));
      const emptyReady = (await firstList(empty.baseUrl, false, 60_000)) - emptyStart;
      await empty.stop();
      const shaStart = performance.now();
      const shaCpuStart = reapedChildrenCpuMs();
      execFileSync('sh', ['-c', 'find . -type f -print0 | xargs -0 sha1sum > /dev/null'], { cwd: tree });
      const shaMs = performance.now() - shaStart;
      const shaCpuMs = reapedChildrenCpuMs() - shaCpuStart;
      return [emptyReady, emptyReady, bytes / MB / (shaMs / 1000), (shaCpuMs * 1000) / n];
    };
    const name = 'empty managed node start';
    return ctx.interleave([
      {
        metrics: [
          { metric: `first listObjects answer, ${n} files (from spawn)`, unit: 'ms', higherIsBetter: false, baselineName: name },
          { metric: 'first non-empty listObjects (from spawn)', unit: 'ms', higherIsBetter: false, baselineName: name },
          { metric: `checksum scan of ${(bytes / MB).toFixed(0)} MB`, unit: 'MB/s', higherIsBetter: true, baselineName: 'sha1sum (xargs, 1 process)', note: 'scan time from the node\'s "wrap scan finished" log line' },
          // The rate above moves with whatever shares the cores; the CPU a file costs much less.
          { metric: 'checksum scan CPU per file (server, every thread)', unit: 'µs', higherIsBetter: false, baselineName: 'sha1sum (xargs, 1 process)', note: 'the node\'s cpuMs over the scan, from its "wrap scan finished" line; sha1sum\'s, find\'s and xargs\'s from this process\'s reaped children' },
        ],
        run: (subject) => (subject === 'baseline' ? baselines() : wrapNode(subject)),
      },
    ]);
  },
};
