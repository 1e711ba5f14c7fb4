import { pino } from 'pino';

/** The structured logger the core writes to (pino's interface, so any pino instance fits). */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  /** Whether a line at `level` would be written (pino's); absent: assume it would. */
  isLevelEnabled?(level: string): boolean;
}

export function createLogger(options: { level?: string; pretty?: boolean } = {}): Logger {
  return pino({ level: options.level ?? process.env.MEMBERKIT_LOG_LEVEL ?? 'info' });
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };
