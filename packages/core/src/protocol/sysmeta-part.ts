import { DecodeError, SystemMetadataCodec, type SystemMetadata } from '@memberkit/types';
import { fail, type Operation } from '../errors.js';

/**
 * The `sysmeta` part of a request as SystemMetadata: missing is InvalidRequest, anything the
 * type does not accept is InvalidSystemMetadata (with the decoder's reason), for `op`.
 */
export function decodeSysmetaPart(op: Operation, xml: string | Uint8Array | undefined, pid?: string): SystemMetadata {
  const withPid = pid === undefined ? {} : { pid };
  if (xml === undefined) throw fail(op, 'InvalidRequest', "the 'sysmeta' part is missing", withPid);
  try {
    return SystemMetadataCodec.decode(xml);
  } catch (err) {
    if (DecodeError.is(err)) throw fail(op, 'InvalidSystemMetadata', `the sysmeta part is not valid system metadata: ${err.message}`, withPid);
    throw err;
  }
}
