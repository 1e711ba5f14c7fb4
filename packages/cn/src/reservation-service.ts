import { randomUUID } from 'node:crypto';
import { identifierProblem } from '@memberkit/types';
import { fail, type CallContext, type Operation } from '@memberkit/core';
import { DELETED_SUBJECT } from './cn-writes.js';
import type { CnServices } from './services.js';

/**
 * Identifier reservations: reserveIdentifier ("later create/update calls for it must come
 * from the same principal; usable as PID or SID in v2"), generateIdentifier (a new
 * identifier, reserved for its caller) and hasReservation. A reservation holds for
 * cn.reservationTtlSeconds. The caller's subjects (equivalent identities and groups,
 * expanded by the CN's identity store) count as the owner.
 */
export class Reservations {
  constructor(private readonly s: CnServices) {}

  private get ttlMs(): number {
    return this.s.config.cn.reservationTtlSeconds * 1000;
  }

  /** Refuse before reading the body: reservations are made by authenticated callers. */
  assertMayReserve(op: Operation, ctx: CallContext): void {
    if (!ctx.session.authenticated) throw fail(op, 'NotAuthorized', 'reserving an identifier needs an authenticated caller (a certificate or a bearer token): the reservation belongs to its subject');
  }

  /** reserveIdentifier: IdentifierNotUnique when the identifier is in use or reserved by another subject. */
  async reserve(ctx: CallContext, id: string | undefined): Promise<string> {
    const op = 'CNCore.reserveIdentifier';
    this.assertMayReserve(op, ctx);
    if (id === undefined) throw fail(op, 'InvalidRequest', "the identifier to reserve is missing: send it as the form field 'pid' (or 'id')");
    const problem = identifierProblem(id);
    if (problem) throw fail(op, 'InvalidRequest', `pid: ${problem}`, { pid: id });
    await this.reserveFor(op, ctx, id);
    return id;
  }

  private async reserveFor(op: Operation, ctx: CallContext, id: string): Promise<void> {
    const use = await this.s.metadata.identifierUse(id);
    if (use) throw fail(op, 'IdentifierNotUnique', `'${id}' is already in use as a ${use === 'pid' ? 'PID' : 'SID'}; reserve another identifier`, { pid: id });
    const now = this.s.clock.now();
    const existing = await this.s.reservations.get(id, now);
    // A reservation of one of the caller's identities is the caller's: renewed, owner kept.
    const owner = existing && ctx.session.subjects.has(existing.subject) ? existing.subject : ctx.session.subject;
    const outcome = await this.s.reservations.reserve(id, owner, now, this.ttlMs);
    if (!outcome.reserved) {
      const why = outcome.owner.subject === DELETED_SUBJECT ? 'it belonged to an object deleted from the federation' : 'another subject reserved it';
      throw fail(op, 'IdentifierNotUnique', `'${id}' cannot be reserved: ${why}; reserve another identifier`, { pid: id });
    }
  }

  /**
   * generateIdentifier: "generated unique identifier, usable as PID or SID". Scheme UUID
   * (`urn:uuid:...`, or the fragment followed by a UUID); DOI and ARK are not minted here.
   * The identifier is reserved for its caller.
   */
  async generate(ctx: CallContext, scheme: string | undefined, fragment: string | undefined): Promise<string> {
    const op = 'CNCore.generateIdentifier';
    this.assertMayReserve(op, ctx);
    const name = (scheme ?? '').trim().toUpperCase();
    if (name === 'DOI' || name === 'ARK') throw fail(op, 'InvalidRequest', `scheme '${scheme}' is not minted by this Coordinating Node (it mints no ${name} identifiers); use scheme=UUID`);
    if (name !== 'UUID') throw fail(op, 'InvalidRequest', `unsupported identifier scheme '${scheme ?? ''}'; use scheme=UUID`);
    for (let attempt = 0; attempt < 5; attempt++) {
      const id = fragment ? `${fragment}${randomUUID()}` : `urn:uuid:${randomUUID()}`;
      const problem = identifierProblem(id);
      if (problem) throw fail(op, 'InvalidRequest', `fragment: the identifier it makes is not valid (${problem})`);
      try {
        await this.reserveFor(op, ctx, id);
        return id;
      } catch (err) {
        // A collision with a UUID is as good as impossible; try another one all the same.
        if ((err as { exceptionName?: string }).exceptionName !== 'IdentifierNotUnique') throw err;
      }
    }
    throw fail(op, 'ServiceFailure', 'could not generate an unused identifier');
  }

  /**
   * hasReservation: "HTTP 200 when id is reserved and owned by subject; otherwise an exception
   * with its status (id unknown, already in use, or reserved by someone else)": NotFound,
   * IdentifierNotUnique, NotAuthorized. Owned by `subject` means reserved by it or by one of
   * its equivalent identities or groups.
   */
  async hasReservation(_ctx: CallContext, id: string, subject: string | undefined): Promise<true> {
    const op = 'CNCore.hasReservation';
    if (subject === undefined || subject.trim() === '') throw fail(op, 'InvalidRequest', 'the subject whose reservation to check is missing (GET /reserve/{id}?subject={subject})', { pid: id });
    const reservation = await this.s.reservations.get(id, this.s.clock.now());
    if (!reservation || reservation.subject === DELETED_SUBJECT) {
      const use = await this.s.metadata.identifierUse(id);
      if (use) throw fail(op, 'IdentifierNotUnique', `'${id}' is in use as a ${use === 'pid' ? 'PID' : 'SID'}; it is not reserved`, { pid: id });
      if (reservation) throw fail(op, 'IdentifierNotUnique', `'${id}' belonged to an object deleted from the federation; it is not reserved`, { pid: id });
      throw fail(op, 'NotFound', `'${id}' is not reserved (or its reservation expired)`, { pid: id });
    }
    const owners = await this.s.subjects.expand(subject);
    if (!owners.has(reservation.subject) && reservation.subject !== subject) {
      throw fail(op, 'NotAuthorized', `'${id}' is reserved by another subject than '${subject}'`, { pid: id });
    }
    return true;
  }
}
