import type { ObjectRecord } from '@memberkit/types';
import type { LandingPage } from './landing.js';

/** What a theme gets: the object (already authorized for read) and lazy access to the rest. */
export interface ThemeContext {
  record: ObjectRecord;
  /** The landing page data (package, science metadata, files, citation), gathered on first call. */
  page(): Promise<LandingPage>;
  /** Bytes of a document the caller may read (bounded; for metadata-sized objects). */
  bytes(record: ObjectRecord): Promise<Uint8Array>;
  /** Encoded system metadata of `record` (v2 XML). */
  systemMetadataXml(record: ObjectRecord): string;
}

export interface ThemeOutput {
  body: string | Uint8Array;
  /** Overrides the theme's media type. */
  mediaType?: string;
  /** Extra response headers (e.g. Content-Disposition). */
  headers?: Record<string, string>;
}

/**
 * A view theme: a small module. `name` is the path segment (`/views/{name}/{id}`) and the
 * option listViews returns; `mediaType` is the Content-Type of what `render` returns.
 */
export interface Theme {
  name: string;
  description: string;
  mediaType: string;
  /** Content-Security-Policy of what it renders (default: response-headers.ts HTML_CSP / OTHER_CSP). */
  contentSecurityPolicy?: string;
  /**
   * The output depends only on `ctx.page()` (not on bytes or anything else): anonymous views
   * are then computed once per (object version, package version, page) and cached.
   */
  cacheable?: boolean;
  render(ctx: ThemeContext): Promise<ThemeOutput>;
}
