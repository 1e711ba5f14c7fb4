import { constants } from 'node:os';

/**
 * How long a repeated SIGINT or SIGTERM counts as the same request to stop. A terminal's Ctrl-C
 * reaches every process of the foreground group, npm (`npm start`, `npm run memberkit`) among
 * them, and npm forwards the signal to its child again: one Ctrl-C, two signals, milliseconds apart.
 */
export const REPEAT_WINDOW_MS = 2_000;

type Stop = (signal: NodeJS.Signals) => Promise<void> | void;

/**
 * Run `stop` on the first SIGINT or SIGTERM. The listeners stay for the process's life: with a
 * one-time listener the copy npm forwards found the default action and killed the process in
 * the middle of its graceful stop (requests in flight cut, the federation's nodes orphaned).
 * A repeat within REPEAT_WINDOW_MS is that copy and is ignored; a later one is the operator
 * insisting, and the process exits at once (as a second Ctrl-C does elsewhere), unless
 * `exitOnRepeat` is false: a process whose supervisor ends it if its stop takes too long.
 */
export function onStopSignals(stop: Stop, options: { exitOnRepeat?: boolean; say?: (line: string) => void } = {}): void {
  const say = options.say ?? ((line: string) => console.error(line));
  let first: number | undefined;
  const handle = (signal: NodeJS.Signals): void => {
    if (first === undefined) {
      first = Date.now();
      void stop(signal);
      return;
    }
    if (options.exitOnRepeat === false || Date.now() - first < REPEAT_WINDOW_MS) return;
    say(`${signal} again while stopping: exiting now, without waiting for the rest of the graceful stop`);
    process.exit(128 + (constants.signals[signal] ?? 0));
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
}
