/**
 * The node's clock. `now()` never returns a time earlier than one it returned before, and
 * returns a strictly later time on each call: every change must move
 * dateSysMetadataModified forward (Coordinating Nodes never harvest a date that moves
 * backwards, and two changes sharing a millisecond could be missed by a harvest window).
 */
export interface Clock {
  now(): Date;
}

export class MonotonicClock implements Clock {
  private last = 0;
  constructor(private readonly source: () => number = Date.now) {}
  now(): Date {
    const t = Math.max(this.source(), this.last + 1);
    this.last = t;
    return new Date(t);
  }
}
