import type { MemberkitConfig } from './config-schema.js';

/**
 * Errors an operator causes and fixes (a database that refuses us, a missing bucket, a port in
 * use): printed as one line naming the cause and the setting to change, never as a stack.
 */
export class OperatorError extends Error {
  override readonly name = 'OperatorError';
}

/** The message of the innermost cause (the driver's own words), or its code when it has none. */
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
  return messages.at(-1) ?? String(err);
}

/** The settings that say where a component is, per section and backend type. */
function settingsOf(section: 'storage' | 'catalogue', config: MemberkitConfig): string {
  const type = config[section].type;
  if (section === 'catalogue') {
    if (type === 'sql') return config.catalogue.connectionEnv !== undefined ? `catalogue.connectionEnv (${String(config.catalogue.connectionEnv)})` : 'catalogue.connection';
    if (type === 'sqlite') return 'catalogue.file';
    return 'catalogue.*';
  }
  if (type === 's3' || type === 's3-bucket') return 'storage.bucket, storage.endpoint, storage.region, storage.credentials';
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
        throw new OperatorError(`cannot open the ${section} (${config[section].type}): ${rootCause(err)} — check ${settingsOf(section, config)} in ${file}`, { cause: err });
      }
    };
  }
}

/** A listen failure as one line naming server.port / --port (or server.host / --host). */
export function listenError(err: unknown, port: number, host: string, file: string): OperatorError | undefined {
  const code = (err as { code?: unknown })?.code;
  if (code === 'EADDRINUSE') return new OperatorError(`port ${port} is already in use on ${host}: choose another with server.port in ${file} or --port`);
  if (code === 'EACCES') return new OperatorError(`no permission to listen on port ${port}: use a port above 1023 (server.port in ${file} or --port) or a reverse proxy`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new OperatorError(`cannot listen on address ${host}: it is not an address of this machine (server.host in ${file} or --host)`);
  return undefined;
}
