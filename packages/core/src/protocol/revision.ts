// The revision rule is shared with adapters and science (wrap scans, dataset maps): it lives
// in @memberkit/types; the core's protocol modules import it from here.
export { nextRevision, withChanges } from '@memberkit/types';
