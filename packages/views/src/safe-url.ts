/**
 * The one rule for URLs taken from uploaded documents: only absolute `http:` and `https:` URLs
 * become links (or JSON-LD identifiers); anything else (`javascript:`, `data:`, relative
 * paths, garbage) is not a link. Applied where the landing model is built and again in themes.
 */
export function httpUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (!/^https?:\/\//i.test(trimmed)) return undefined;
  try {
    const url = new URL(trimmed);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}
