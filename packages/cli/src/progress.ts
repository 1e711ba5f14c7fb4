import type { Logger } from '@memberkit/core';
import type { ScanReport } from './backends/types.js';

/**
 * Long work made visible: a live line on a terminal (cli-progress, on stderr), periodic JSON
 * log lines otherwise (every `intervalMs`, default 5 s), so a 30 s scan never runs silent.
 */
export interface ProgressReporter {
  update(report: ScanReport): void;
  stop(): void;
}

export interface ProgressOptions {
  /** What is running: "wrap scan". */
  label: string;
  logger: Logger;
  /** Draw a live line (default: stderr is a terminal). */
  tty?: boolean;
  intervalMs?: number;
  /** Files expected in total, when known (a previous scan's count): gives an ETA. */
  expected?: number;
}

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

/** The numbers shown: files done, the hashed share, bytes, files per second, ETA when a total is known. */
export function progressFigures(report: ScanReport, expected?: number) {
  const processed = report.added + report.changed + report.unchanged + report.skipped.length;
  const seconds = report.durationMs / 1000;
  const rate = seconds > 0 ? processed / seconds : 0;
  const total = expected !== undefined && expected >= processed ? expected : undefined;
  const etaSeconds = total !== undefined && rate > 0 ? Math.round((total - processed) / rate) : undefined;
  return {
    seen: report.seen ?? processed,
    processed,
    hashed: report.added + report.changed,
    unchanged: report.unchanged,
    skipped: report.skipped.length,
    removed: report.removed,
    ...(report.bytesHashed !== undefined ? { bytesHashed: report.bytesHashed } : {}),
    filesPerSecond: Math.round(rate),
    elapsedSeconds: Math.round(seconds),
    ...(etaSeconds !== undefined ? { etaSeconds } : {}),
  };
}

function line(label: string, f: ReturnType<typeof progressFigures>): string {
  const bytes = f.bytesHashed !== undefined ? ` | ${formatBytes(f.bytesHashed)} read` : '';
  const eta = f.etaSeconds !== undefined ? ` | ETA ${f.etaSeconds} s` : '';
  return `${label}: ${f.seen} seen | ${f.hashed} hashed | ${f.unchanged} unchanged | ${f.skipped} skipped${bytes} | ${f.filesPerSecond} files/s | ${f.elapsedSeconds} s${eta}`;
}

export async function startProgress(options: ProgressOptions): Promise<ProgressReporter> {
  const tty = options.tty ?? process.stderr.isTTY === true;
  let last: ScanReport | undefined;
  if (tty) {
    const { SingleBar } = await import('cli-progress');
    const bar = new SingleBar({
      stream: process.stderr,
      format: (_o, _p, payload: { text?: string }) => payload.text ?? `${options.label}: starting`,
      hideCursor: true,
      clearOnComplete: false,
      fps: 5,
    });
    bar.start(options.expected ?? 0, 0, { text: `${options.label}: starting` });
    return {
      update(report) {
        last = report;
        const f = progressFigures(report, options.expected);
        bar.update(f.processed, { text: line(options.label, f) });
      },
      stop() {
        if (last) bar.update({ text: line(options.label, progressFigures(last, options.expected)) });
        bar.stop();
      },
    };
  }
  const timer = setInterval(() => {
    if (last) options.logger.info(progressFigures(last, options.expected), `${options.label} progress`);
    else options.logger.info({}, `${options.label} running`);
  }, options.intervalMs ?? 5000);
  timer.unref();
  return {
    update(report) {
      last = report;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
