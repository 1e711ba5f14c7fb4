import type { SpatialCoverage } from '@memberkit/science';
import { landRings } from './land.js';

/**
 * The map of a page's spatial coverage, as plain SVG geometry (no script, no tiles, no
 * requests): an equirectangular frame zoomed to the coverage, the land of the world under it
 * (land.ts, simplified to the frame's scale), a graticule, boxes as rectangles and points as
 * markers. Coordinates are in a fixed WIDTH x HEIGHT viewBox, so strokes and markers keep
 * their size at any zoom and the path's precision follows the scale (a few KB at world scale).
 */
export const WIDTH = 720;
export const HEIGHT = 360;

/** Narrowest frame (degrees of longitude): a field site shows the coast and region around it. */
const MIN_SPAN_LON = 12;
/** Frames this narrow (degrees of longitude) or narrower draw the finer 1:50m coast. */
const REGIONAL_SPAN_LON = 60;
/** Boxes narrower and lower than this (viewBox units) are drawn as markers. */
const MIN_BOX = 10;
/** Tolerance of the land outline, in viewBox units (px at full size). */
const TOLERANCE = 1;

export interface MapView {
  /** West edge (longitude, may be < -180 or > 180 when the frame crosses the antimeridian) and north edge. */
  west: number;
  north: number;
  /** viewBox units per degree. */
  scale: number;
}

export interface CoverageMap {
  viewBox: string;
  /** The land outline (one SVG path `d`). */
  land: string;
  /** Meridians and parallels at a round step (one path `d`). */
  graticule: string;
  /** Boxes with an area at this scale. */
  boxes: Array<{ x: number; y: number; width: number; height: number; label: string }>;
  /** Points, and boxes too small to see at this scale. */
  points: Array<{ cx: number; cy: number; label: string }>;
  /** The frame in words: "150°W to 126°W, 60°N to 72°N". */
  extent: string;
  /** The graticule's step, in degrees. */
  step: number;
}

function crossesAntimeridian(s: SpatialCoverage): boolean {
  return s.west > s.east;
}

/** The frame for the coverage: its boxes with a margin, at least MIN_SPAN_LON wide, 2:1, within the poles. */
export function viewOf(spatial: readonly SpatialCoverage[]): MapView {
  const valid = spatial.filter((s) => [s.west, s.east, s.north, s.south].every(Number.isFinite));
  if (valid.length === 0) return { west: -180, north: 90, scale: WIDTH / 360 };
  let west = Infinity;
  let east = -Infinity;
  let south = Infinity;
  let north = -Infinity;
  for (const s of valid) {
    // A box across the antimeridian is taken eastward past 180.
    const e = crossesAntimeridian(s) ? s.east + 360 : s.east;
    west = Math.min(west, s.west);
    east = Math.max(east, e);
    south = Math.min(south, s.south, s.north);
    north = Math.max(north, s.south, s.north);
  }
  let spanLon = Math.max(MIN_SPAN_LON, (east - west) * 1.5);
  let spanLat = Math.max(spanLon / 2, (north - south) * 1.5);
  spanLon = spanLat * 2;
  if (spanLon >= 360 || spanLat >= 180) return { west: -180, north: 90, scale: WIDTH / 360 };
  const cx = (west + east) / 2;
  const cy = (south + north) / 2;
  const top = Math.min(90, Math.max(-90 + spanLat, cy + spanLat / 2));
  let left = cx - spanLon / 2;
  // A coverage on one side of the antimeridian keeps the frame within -180..180.
  if (east <= 180) left = Math.min(Math.max(left, -180), 180 - spanLon);
  return { west: left, north: top, scale: WIDTH / spanLon };
}

/** Round to the precision this scale needs, without "-0" or trailing zeros. */
function num(v: number, decimals: number): string {
  const s = v.toFixed(decimals);
  return (s.includes('.') ? s.replace(/\.?0+$/, '') : s).replace(/^-0$/, '0');
}

/** Douglas–Peucker on interleaved x/y (iterative: no recursion depth on long rings). Returns kept indices. */
function simplify(xs: Float64Array, n: number, tolerance: number): number[] {
  if (n <= 2) return Array.from({ length: n }, (_, i) => i);
  const keep = new Uint8Array(n);
  keep[0] = 1;
  keep[n - 1] = 1;
  const stack: Array<[number, number]> = [[0, n - 1]];
  const t2 = tolerance * tolerance;
  while (stack.length) {
    const [a, b] = stack.pop()!;
    const ax = xs[2 * a]!;
    const ay = xs[2 * a + 1]!;
    const dx = xs[2 * b]! - ax;
    const dy = xs[2 * b + 1]! - ay;
    const len2 = dx * dx + dy * dy;
    let worst = -1;
    let worstD = t2;
    for (let i = a + 1; i < b; i++) {
      const px = xs[2 * i]! - ax;
      const py = xs[2 * i + 1]! - ay;
      let d: number;
      if (len2 === 0) d = px * px + py * py;
      else {
        const cross = px * dy - py * dx;
        d = (cross * cross) / len2;
      }
      if (d > worstD) (worstD = d), (worst = i);
    }
    if (worst >= 0) {
      keep[worst] = 1;
      stack.push([a, worst], [worst, b]);
    }
  }
  const out: number[] = [];
  for (let i = 0; i < n; i++) if (keep[i]) out.push(i);
  return out;
}

/** The land in the frame as one path: rings (and their ±360° copies) that meet it, simplified, relative moves. */
export function landPath(view: MapView): string {
  const spanLon = WIDTH / view.scale;
  const spanLat = HEIGHT / view.scale;
  const east = view.west + spanLon;
  const south = view.north - spanLat;
  const parts: string[] = [];
  const buffer = new Float64Array(2 * 4096);
  for (const ring of landRings(spanLon <= REGIONAL_SPAN_LON ? '50m' : '110m')) {
    for (const shift of [-360, 0, 360]) {
      if (ring.maxX + shift < view.west || ring.minX + shift > east || ring.maxY < south || ring.minY > view.north) continue;
      // Too small to see at this scale.
      if ((ring.maxX - ring.minX) * view.scale < 3 && (ring.maxY - ring.minY) * view.scale < 3) continue;
      const n = ring.points.length / 2;
      const xs = n * 2 <= buffer.length ? buffer : new Float64Array(n * 2);
      // Points far outside the frame are pulled onto a margin one frame wide around it: the
      // coast inside is unchanged (1:110m edges are far shorter than a frame) and the long
      // runs outside become straight lines that simplification drops.
      for (let i = 0; i < n; i++) {
        xs[2 * i] = clamp((ring.points[2 * i]! + shift - view.west) * view.scale, -WIDTH, 2 * WIDTH);
        xs[2 * i + 1] = clamp((view.north - ring.points[2 * i + 1]!) * view.scale, -HEIGHT, 2 * HEIGHT);
      }
      const kept = simplify(xs, n, TOLERANCE);
      if (kept.length < 3) continue;
      // Relative coordinates in whole units: the tolerance is below one unit anyway.
      let px = Math.round(xs[2 * kept[0]!]!);
      let py = Math.round(xs[2 * kept[0]! + 1]!);
      const d: string[] = [`M${px} ${py}`];
      for (let k = 1; k < kept.length; k++) {
        const x = Math.round(xs[2 * kept[k]!]!);
        const y = Math.round(xs[2 * kept[k]! + 1]!);
        if (x === px && y === py) continue;
        d.push(`${x - px} ${y - py}`);
        px = x;
        py = y;
      }
      if (d.length >= 3) parts.push(`${d[0]}l${d.slice(1).join(' ')}z`);
    }
  }
  return parts.join('').replace(/ -/g, '-');
}

const STEPS = [1, 2, 5, 10, 15, 30];

function graticule(view: MapView): { d: string; step: number } {
  const spanLon = WIDTH / view.scale;
  const step = STEPS.find((s) => spanLon / s <= 8) ?? 30;
  const spanLat = HEIGHT / view.scale;
  const parts: string[] = [];
  for (let lon = Math.ceil(view.west / step) * step; lon <= view.west + spanLon; lon += step) {
    parts.push(`M${num((lon - view.west) * view.scale, 1)} 0V${HEIGHT}`);
  }
  for (let lat = Math.ceil((view.north - spanLat) / step) * step; lat <= view.north; lat += step) {
    parts.push(`M0 ${num((view.north - lat) * view.scale, 1)}H${WIDTH}`);
  }
  return { d: parts.join(''), step };
}

function degrees(v: number, pos: string, neg: string, decimals = 1): string {
  const norm = pos === 'E' && v > 180 ? v - 360 : pos === 'E' && v < -180 ? v + 360 : v;
  const a = Math.abs(norm);
  return `${num(a, decimals)}°${norm === 0 ? '' : norm > 0 ? pos : neg}`;
}

/** A box or point in words, for screen readers and tooltips. */
export function placeLabel(s: SpatialCoverage): string {
  const point = s.west === s.east && s.north === s.south;
  const d = (v: number, pos: string, neg: string): string => degrees(v, pos, neg, 4);
  const where = point ? `${d(s.north, 'N', 'S')}, ${d(s.west, 'E', 'W')}` : `${d(s.south, 'N', 'S')} to ${d(s.north, 'N', 'S')}, ${d(s.west, 'E', 'W')} to ${d(s.east, 'E', 'W')}`;
  return s.description ? `${s.description} (${where})` : where;
}

export function coverageMap(spatial: readonly SpatialCoverage[]): CoverageMap {
  const view = viewOf(spatial);
  const { d: grid, step } = graticule(view);
  const spanLon = WIDTH / view.scale;
  const boxes: CoverageMap['boxes'] = [];
  const points: CoverageMap['points'] = [];
  for (const s of spatial) {
    if (![s.west, s.east, s.north, s.south].every(Number.isFinite)) continue;
    const label = placeLabel(s);
    const east = crossesAntimeridian(s) ? s.east + 360 : s.east;
    // Draw the box where it falls in the frame (the frame may lie past ±180).
    let shift = 0;
    if (east < view.west) shift = 360;
    else if (s.west > view.west + spanLon) shift = -360;
    const x = (s.west + shift - view.west) * view.scale;
    const y = (view.north - Math.max(s.north, s.south)) * view.scale;
    const width = (east - s.west) * view.scale;
    const height = Math.abs(s.north - s.south) * view.scale;
    // A box too small to see at this scale (a field site) is shown as a marker.
    if (width >= MIN_BOX || height >= MIN_BOX) boxes.push({ x: round1(x), y: round1(y), width: round1(Math.max(width, 1)), height: round1(Math.max(height, 1)), label });
    else points.push({ cx: round1(x + width / 2), cy: round1(y + height / 2), label });
  }
  const south = view.north - HEIGHT / view.scale;
  return {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    land: landPath(view),
    graticule: grid,
    boxes,
    points,
    extent: `${degrees(view.west, 'E', 'W')} to ${degrees(view.west + spanLon, 'E', 'W')}, ${degrees(south, 'N', 'S')} to ${degrees(view.north, 'N', 'S')}`,
    step,
  };
}

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

function round1(v: number): number {
  return Math.round(v * 10) / 10;
}
