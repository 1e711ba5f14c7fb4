import type { Context, Hono } from 'hono';
import { fail, xmlResponse, type CallContext, type ExtensionKit, type NodeExtension } from '@memberkit/core';
import { OptionListCodec, SystemMetadataCodec, type ApiVersion, type ObjectRecord } from '@memberkit/types';
import type { ScienceCache } from '@memberkit/science';
import { gatherLanding, type LandingPage } from './landing.js';
import { readAll, scienceServices, type ScienceServices } from './shared.js';
import type { Theme, ThemeContext } from './theme.js';
import { defaultTheme } from './themes/default.js';
import { jsonLdTheme } from './themes/jsonld.js';
import { metadataTheme } from './themes/metadata.js';

export interface ViewsOptions {
  /** Extra themes (or replacements: a theme named `default` replaces the landing page). */
  themes?: Theme[];
  /** Share a ScienceCache with other extensions (default: one per node, shared with MNPackage). */
  science?: ScienceCache;
  /** Largest document the `metadata` theme returns (default 16 MiB). */
  maxDocumentBytes?: number;
}

export const BUILTIN_THEMES: readonly Theme[] = [defaultTheme, metadataTheme, jsonLdTheme];

/** `https://host/mn/v2`: the request's URL up to the API version, for absolute links. */
export function apiBase(c: Context, version: ApiVersion): string {
  const url = new URL(c.req.url);
  const raw = url.pathname;
  const marker = `/${version}/`;
  const at = raw.indexOf(marker);
  const proto = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim();
  const host = c.req.header('x-forwarded-host')?.split(',')[0]?.trim();
  const origin = proto && host ? `${proto}://${host}` : url.origin;
  return `${origin}${at >= 0 ? raw.slice(0, at + marker.length - 1) : `/${version}`}`;
}

/**
 * MNView: listViews (`GET /views`, and `GET /view` as the Python client asks) and view
 * (`GET /views/{theme}/{id}`, PID or SID). Views are not logged as read events: a landing
 * page is not a download (the downloads it links to go through MNRead.get and are logged).
 */
export function createViewsExtension(options: ViewsOptions = {}): NodeExtension {
  const themes = new Map<string, Theme>();
  for (const t of [...BUILTIN_THEMES, ...(options.themes ?? [])]) themes.set(t.name, t);
  const fallback = themes.get('default')!;
  let services: ScienceServices | undefined;

  return {
    name: 'views',
    services: [{ name: 'MNView', versions: ['v1', 'v2'] }],
    async open(kit) {
      services = scienceServices(kit, options.science ? { science: options.science } : {});
    },
    async onChange(change) {
      services?.science.invalidate(change.pid);
      await services?.packages.onChange(change);
    },
    routes(app: Hono, version: ApiVersion, kit: ExtensionKit) {
      const listViews = kit.wrap('MNView.listViews', async () =>
        xmlResponse(OptionListCodec.encode({ key: 'theme', description: 'Views of objects this node renders (GET /views/{theme}/{id}); unknown themes render with default', option: [...themes.keys()] }, version)),
      );
      app.get('/views', listViews);
      app.get('/view', listViews);

      const view = kit.wrap('MNView.view', async (c, ctx) => {
        const id = c.req.param('id') ?? '';
        if (id === '') throw fail('MNView.view', 'InvalidRequest', 'an identifier is required: GET /views/{theme}/{id}');
        const theme = themes.get(c.req.param('theme') ?? '') ?? fallback;
        // Access control as for get (v2: PID or SID).
        const record = await kit.objects.authorized(ctx, 'MNView.view', id, 'read');
        const s = services ?? scienceServices(kit);
        const tctx = themeContext(kit, s, ctx, record, apiBase(c, version), options.maxDocumentBytes);
        const out = await theme.render(tctx);
        const headers: Record<string, string> = {
          'Content-Type': out.mediaType ?? theme.mediaType,
          'Last-Modified': record.sysmeta.dateSysMetadataModified.toUTCString(),
          'X-Content-Type-Options': 'nosniff',
          Vary: 'Authorization',
        };
        return new Response(out.body, { status: 200, headers });
      });
      app.get('/views/:theme/:id{.+}', view);
    },
  };
}

function themeContext(kit: ExtensionKit, services: ScienceServices, ctx: CallContext, record: ObjectRecord, api: string, maxBytes?: number): ThemeContext {
  let page: Promise<LandingPage> | undefined;
  return {
    record,
    page: () => (page ??= gatherLanding(kit, services, ctx, record, { api })),
    async bytes(r) {
      if (!kit.access.allows(ctx.session, r.sysmeta, 'read')) throw fail('MNView.view', 'NotAuthorized', `'${ctx.session.subject}' may not read '${r.sysmeta.identifier}'`);
      try {
        return await readAll(kit, r, maxBytes);
      } catch (err) {
        throw fail('MNView.view', 'ServiceFailure', `could not read '${r.sysmeta.identifier}': ${(err as Error).message}`);
      }
    },
    systemMetadataXml: (r) => SystemMetadataCodec.encode(r.sysmeta, 'v2'),
  };
}
