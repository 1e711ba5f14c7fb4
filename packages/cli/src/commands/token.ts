import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { ConfigError, DEV_KEY_FILE, DEV_SUBJECT } from '../node-files.js';

/**
 * `memberkit token --subject S [--ttl 1h] [--key file] [dir]`: print a JWT naming S, signed
 * with the data folder's development key (written by the first run), which that node's
 * configuration trusts. For development and tests; production tokens come from the CN.
 */
export function registerTokenCommand(program: Command): void {
  program
    .command('token')
    .description('print a bearer JWT for a subject, signed with the local development key the first-run configuration trusts')
    .argument('[dir]', 'data folder holding the key', 'data')
    .option('-s, --subject <subject>', 'subject the token names', DEV_SUBJECT)
    .option('--ttl <duration>', 'lifetime: seconds, or 30m, 12h, 7d', '3600')
    .option('-k, --key <file>', `private key (PEM; default: <dir>/${DEV_KEY_FILE})`)
    .option('--issuer <iss>', 'iss claim (when the node requires one)')
    .action(async (dir: string, opts: { subject: string; ttl: string; key?: string; issuer?: string }) => {
      const keyFile = resolve(opts.key ?? join(dir, DEV_KEY_FILE));
      if (!existsSync(keyFile)) throw new ConfigError(`no signing key at ${keyFile}: run \`memberkit serve ${dir}\` once (it writes one), or pass --key`);
      // The core is loaded here, not at start: --help stays light.
      const { mintToken, parseDuration } = await import('@memberkit/core');
      let ttlSeconds: number;
      try {
        ttlSeconds = parseDuration(opts.ttl);
      } catch (err) {
        throw new InvalidArgumentError(`--ttl: ${(err as Error).message}`);
      }
      const token = await mintToken(readFileSync(keyFile, 'utf8'), { subject: opts.subject, ttlSeconds, ...(opts.issuer ? { issuer: opts.issuer } : {}) });
      process.stdout.write(token + '\n');
    });
}
