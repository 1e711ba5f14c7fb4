import { AdapterError, type FormatRecord } from '@memberkit/types';
import { createCnParts, CnConfigError, loadCnFolder } from './cn-folder.js';
import { migrateCoordinatingNode } from './cn-node.js';
import { FormatStore } from './store/formats.js';

/**
 * `memberkit cn add-format DIR`: add a format to the CN's list, in its database (a running CN
 * serves it at once: listFormats reads the table).
 */
export async function addFormatToFolder(dir: string, format: FormatRecord): Promise<void> {
  const loaded = loadCnFolder({ dir });
  const { catalogue } = createCnParts(loaded);
  await catalogue.open();
  try {
    await migrateCoordinatingNode(catalogue);
    await new FormatStore(catalogue.store).add(format);
  } catch (err) {
    if (AdapterError.is(err) && err.kind === 'already-exists') throw new CnConfigError(`the format '${format.formatId}' is already in the list of the Coordinating Node in ${dir}`);
    throw err;
  } finally {
    await catalogue.close();
  }
}
