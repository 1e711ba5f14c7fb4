import type { NodeDirectory, SubjectDirectory } from './ports.js';

/** A registry with no nodes (until the CN's registry is configured). */
export const emptyNodeDirectory: NodeDirectory = {
  get: async () => undefined,
  list: async () => [],
};

/** An identity store that knows no accounts: every subject acts as itself only. */
export const selfOnlySubjectDirectory: SubjectDirectory = {
  lookup: async () => undefined,
  expand: async (subject) => new Set([subject]),
};
