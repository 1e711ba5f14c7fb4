import { createLogger } from '@memberkit/core';
import { scanOnce } from '../build-node.js';
import { ConfigError, loadConfig } from '../load-config.js';

/** `memberkit scan`: one scan now, its progress shown while it runs, its counts at the end. */
export async function scanCommand(dir: string, opts: { config?: string }): Promise<void> {
  const loaded = await loadConfig({ dataDir: dir, ...(opts.config ? { configFile: opts.config } : {}) });
  if (!loaded.config.wrap) throw new ConfigError(`scan applies to configurations with a "wrap" section (${loaded.file} has none)`);
  const logger = createLogger({ level: loaded.config.log.level });
  const report = await scanOnce(loaded, logger);
  console.log(`added ${report.added}, changed ${report.changed}, removed ${report.removed}, unchanged ${report.unchanged}, skipped ${report.skipped.length} (${Math.round(report.durationMs)} ms)`);
  for (const s of report.skipped.slice(0, 20)) console.log(`  skipped ${s.path}: ${s.reason}`);
}
