import type { PendingWrite } from '@memberkit/types';

/** The object part of a create, spooled to storage's temporary area (the core's MNStorageService.spool). */
export interface ObjectUpload {
  pending: PendingWrite;
}
