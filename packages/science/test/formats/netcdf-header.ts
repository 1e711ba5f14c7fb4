// A netCDF classic (CDF-1) file written by hand from the format specification (NetCDF
// Users Guide, "File Format Specification"): header with dimensions, global attributes and
// one variable, then its data. Small and exact, so that tests need no netCDF library.

function int32(n: number): number[] {
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

function padded(bytes: number[]): number[] {
  return [...bytes, ...new Array<number>((4 - (bytes.length % 4)) % 4).fill(0)];
}

function name(s: string): number[] {
  const b = [...Buffer.from(s, 'utf8')];
  return [...int32(b.length), ...padded(b)];
}

const NC_DIMENSION = 0x0a;
const NC_VARIABLE = 0x0b;
const NC_ATTRIBUTE = 0x0c;
const NC_CHAR = 2;
const NC_FLOAT = 5;

/** A CDF-1 file with a `time` dimension of `values.length`, text global attributes and one float variable. */
export function netcdfClassicFile(globals: Record<string, string>, values: number[] = [1.5, 2.5, 3.5]): Uint8Array {
  const attrs = Object.entries(globals).flatMap(([k, v]) => [...name(k), ...int32(NC_CHAR), ...int32(Buffer.byteLength(v)), ...padded([...Buffer.from(v, 'utf8')])]);
  const headerWithoutVars = [
    ...[0x43, 0x44, 0x46, 0x01], // "CDF" version 1
    ...int32(0), // numrecs
    ...int32(NC_DIMENSION), ...int32(1), ...name('time'), ...int32(values.length),
    ...(attrs.length ? [...int32(NC_ATTRIBUTE), ...int32(Object.keys(globals).length), ...attrs] : [...int32(0), ...int32(0)]),
  ];
  // One variable: name, 1 dimension (id 0), no attributes, NC_FLOAT, vsize, begin.
  const varPart = (begin: number) => [
    ...int32(NC_VARIABLE), ...int32(1), ...name('temperature'), ...int32(1), ...int32(0), ...int32(0), ...int32(0),
    ...int32(NC_FLOAT), ...int32(values.length * 4), ...int32(begin),
  ];
  const headerLength = headerWithoutVars.length + varPart(0).length;
  const data = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => data.writeFloatBE(v, i * 4));
  return Uint8Array.from([...headerWithoutVars, ...varPart(headerLength), ...data]);
}
