import { createRequire } from 'node:module';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';

/**
 * The world's land as planar rings in longitude/latitude (equirectangular), from Natural
 * Earth (1:110m or 1:50m) as the `world-atlas` package ships it (shipped with the node: no request
 * leaves the server, the page loads nothing). Read once per process, on first use.
 *
 * world-atlas rings are spherical: a ring crossing the antimeridian jumps from 180 to -180,
 * and Antarctica winds around the pole. For a flat map each ring is unwrapped (longitudes
 * made continuous, so a ring may extend past ±180) and a ring around a pole is closed along
 * the map's edge at that pole; drawing each ring shifted by -360, 0 and +360 where it meets
 * the view then shows every coast on both sides of the antimeridian.
 */
export interface LandRing {
  /** x = longitude (unwrapped), y = latitude, interleaved. */
  points: Float64Array;
  minX: number;
  maxX: number;
  minY: number;
  maxY: number;
}

/** 1:110m for world and continent frames; 1:50m (read only when a page needs it) for regional ones. */
export type LandScale = '110m' | '50m';

const rings = new Map<LandScale, LandRing[]>();

export function landRings(scale: LandScale = '110m'): LandRing[] {
  let r = rings.get(scale);
  if (!r) rings.set(scale, (r = readLand(scale)));
  return r;
}

function readLand(scale: LandScale): LandRing[] {
  const topo = createRequire(import.meta.url)(`world-atlas/land-${scale}.json`) as Topology<{ land: GeometryCollection }>;
  const land = feature(topo, topo.objects.land);
  const out: LandRing[] = [];
  for (const f of land.features) {
    const g = f.geometry;
    const polygons = g.type === 'MultiPolygon' ? g.coordinates : g.type === 'Polygon' ? [g.coordinates] : [];
    // Outer rings only: the holes of 1:110m land are lakes too small to matter at these scales.
    for (const polygon of polygons) if (polygon[0]) out.push(planarRing(polygon[0]));
  }
  return out;
}

function planarRing(ring: number[][]): LandRing {
  const xs: number[] = [];
  const ys: number[] = [];
  let offset = 0;
  for (let i = 0; i < ring.length; i++) {
    const [lon = 0, lat = 0] = ring[i]!;
    if (i > 0) {
      const prev = ring[i - 1]![0]!;
      if (lon - prev > 180) offset -= 360;
      else if (prev - lon > 180) offset += 360;
    }
    xs.push(lon + offset);
    ys.push(lat);
  }
  // Unwrapped, a ring around a pole ends a full turn from where it began: close it along that pole.
  const first = xs[0] ?? 0;
  const last = xs[xs.length - 1] ?? 0;
  if (Math.abs(last - first) > 180) {
    const pole = ys.reduce((a, b) => a + b, 0) / Math.max(1, ys.length) < 0 ? -90 : 90;
    xs.push(last, first);
    ys.push(pole, pole);
  }
  const points = new Float64Array(xs.length * 2);
  let minX = Infinity;
  let maxX = -Infinity;
  let minY = Infinity;
  let maxY = -Infinity;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!;
    const y = ys[i]!;
    points[2 * i] = x;
    points[2 * i + 1] = y;
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    if (y < minY) minY = y;
    if (y > maxY) maxY = y;
  }
  return { points, minX, maxX, minY, maxY };
}
