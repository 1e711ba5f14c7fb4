/**
 * Long loops over uploaded content (a map of 60,000 members, a catalogue walk) whose steps
 * resolve synchronously (better-sqlite3 behind an async port) never reach the event loop on
 * their own: `await` of a settled promise only drains microtasks, so every other request
 * waits for the whole loop. A pacer yields to the event loop once `sliceMs` of work has
 * passed since the last yield: cheap per step, and no request waits longer than one slice.
 */
export function eventLoopPacer(sliceMs = 8): () => Promise<void> {
  let last = performance.now();
  return async () => {
    const now = performance.now();
    if (now - last < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    last = performance.now();
  };
}
