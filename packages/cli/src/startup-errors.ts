import type { MemberkitConfig } from './config-schema.js';

/**
 * Errors an operator causes and fixes (a database that refuses us, a missing bucket, a port in
 * use): printed as one line naming the cause and the setting to change, never as a stack.
 */
export class OperatorError extends Error {
  override readonly name = 'OperatorError';
}

/** The message of the innermost cause (the driver's own words, e.g. `role "x" does not exist`), or its code when it has none. */
export function rootCause(err: unknown): string {
  const messages: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e !== undefined && e !== null && depth < 10; depth++) {
    if (e instanceof AggregateError && e.errors.length > 0 && !e.message) e = e.errors[0];
    const { message, code } = e as { message?: unknown; code?: unknown };
    if (typeof message === 'string' && message.trim()) messages.push(message.trim().split('\n')[0]!);
    else if (typeof code === 'string') messages.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  // The innermost sentence: a bare token deeper down ("NotFound", "UnknownError") says less
  // than the message wrapping it ("the bucket x does not exist").
  return messages.findLast((m) => /\s/.test(m)) ?? messages.at(-1) ?? String(err);
}

/** The settings that say where a component is, per section and backend type (and the cause, for S3). */
function settingsOf(section: 'storage' | 'catalogue', config: MemberkitConfig, cause: string): string {
  const type = config[section].type;
  if (section === 'catalogue') {
    if (type === 'sql') return config.catalogue.connectionEnv !== undefined ? `catalogue.connectionEnv (${String(config.catalogue.connectionEnv)})` : 'catalogue.connection';
    if (type === 'sqlite') return 'catalogue.file';
    return 'catalogue.*';
  }
  if (type === 's3' || type === 's3-bucket') {
    if (/bucket/i.test(cause)) return 'storage.bucket';
    if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|getaddrinfo|socket|connect/i.test(cause)) return 'storage.endpoint';
    if (/credential|signature|access denied|forbidden|InvalidAccessKeyId/i.test(cause)) return 'storage.credentials (or the AWS_* environment)';
    return 'storage.bucket, storage.endpoint, storage.region, storage.credentials';
  }
  if (type === 'filesystem' || type === 'tree') return 'storage.root';
  return 'storage.*';
}

/**
 * Make `component.open()` fail with an OperatorError naming the section's settings. The node
 * opens its adapters itself (createMemberNode); this only labels what fails.
 */
export function labelOpenFailures(section: 'storage' | 'catalogue', components: readonly object[], config: MemberkitConfig, file: string): void {
  for (const c of new Set(components) as Set<{ open?: () => Promise<void> }>) {
    const open = c.open?.bind(c);
    if (!open) continue;
    c.open = async () => {
      try {
        await open();
      } catch (err) {
        const cause = rootCause(err);
        throw new OperatorError(`cannot open the ${section} (${config[section].type}): ${cause} — check ${settingsOf(section, config, cause)} in ${file}`, { cause: err });
      }
    };
  }
}

/** A listen failure as one line naming the settings that choose the port and address. */
export function listenError(err: unknown, port: number, host: string, file: string, settings = { port: 'server.port', portFlag: '--port', host: 'server.host', hostFlag: '--host' }): OperatorError | undefined {
  const code = (err as { code?: unknown })?.code;
  const portSetting = `${settings.port} in ${file}${settings.portFlag ? ` or ${settings.portFlag}` : ''}`;
  if (code === 'EADDRINUSE') return new OperatorError(`port ${port} is already in use on ${host}: choose another with ${portSetting}`);
  if (code === 'EACCES') return new OperatorError(`no permission to listen on port ${port}: use a port above 1023 (${portSetting}) or a reverse proxy`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new OperatorError(`cannot listen on address ${host}: it is not an address of this machine (${settings.host} in ${file}${settings.hostFlag ? ` or ${settings.hostFlag}` : ''})`);
  return undefined;
}
