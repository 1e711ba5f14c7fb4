/** Namespaces of the DataONE types (see INTEROP.md: each type uses the namespace that defines it). */
export const TYPES_NS_V1 = 'http://ns.dataone.org/service/types/v1';
export const TYPES_NS_V1_1 = 'http://ns.dataone.org/service/types/v1.1';
export const TYPES_NS_V2 = 'http://ns.dataone.org/service/types/v2.0';

/** The API version of a route: `/v1/...` or `/v2/...`. */
export type ApiVersion = 'v1' | 'v2';

export const DATAONE_NAMESPACES: readonly string[] = [TYPES_NS_V1, TYPES_NS_V1_1, TYPES_NS_V2];
