import type { Context, Hono } from 'hono';
import { fail, publicSession, xmlResponse, type CallContext, type ExtensionKit, type NodeExtension } from '@memberkit/core';
import { OptionListCodec, SystemMetadataCodec, type ApiVersion, type ObjectRecord } from '@memberkit/types';
import type { ScienceCache } from '@memberkit/science';
import { choosePackage, gatherLanding, type LandingPage, type UrlBase } from './landing.js';
import type { PackageModel } from './package-model.js';
import { nodeInfoReader } from './node-info.js';
import { secured } from './response-headers.js';
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
  /**
   * The node's public base URL (`node.baseURL`, e.g. `https://data.example.org/mn`), or a
   * function giving it: every absolute link, canonical URL and JSON-LD `@id` is built from it.
   * Without it, links use the URL the request was made to. X-Forwarded-Host/Proto are never
   * read: any client can send them (behind a reverse proxy, configure node.baseURL).
   */
  baseURL?: string | (() => string | undefined);
  /**
   * The Coordinating Node's base URL (`federation.cnBaseUrl`, e.g. `https://cn.dataone.org/cn`)
   * once the node is registered with the federation. While the node's Node document says
   * `synchronize="true"`, citations of objects without a DOI end with the federation's
   * resolve URL (`{cn}/v2/resolve/{pid}`), which keeps resolving if the node moves; otherwise
   * (a node standing alone, or not harvested) with the node's own `{baseURL}/v2/object/{pid}`.
   */
  federation?: string | (() => string | undefined);
  /**
   * Where a page's download links point: `object` (default) the serving node's get; `resolve`
   * its resolve operation, for a Coordinating Node, which holds the system metadata of data
   * it does not store and redirects each download to a Member Node holding the bytes.
   */
  downloads?: 'object' | 'resolve';
}

export const BUILTIN_THEMES: readonly Theme[] = [defaultTheme, metadataTheme, jsonLdTheme];

/** `https://host/mn/v2`: the configured base URL (else the request's URL up to the API version), for absolute links. */
export function apiBase(c: Context, version: ApiVersion, baseURL?: string): string {
  if (baseURL) return `${baseURL.replace(/\/+$/, '')}/${version}`;
  const url = new URL(c.req.url);
  const raw = url.pathname;
  const marker = `/${version}/`;
  const at = raw.indexOf(marker);
  return `${url.origin}${at >= 0 ? raw.slice(0, at + marker.length - 1) : `/${version}`}`;
}

/** `?start=` of a landing page's member list: a non-negative integer, else 0. */
function startParam(c: Context): number {
  const raw = c.req.query('start');
  return raw && /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
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
  const configuredBase = (): string | undefined => (typeof options.baseURL === 'function' ? options.baseURL() : options.baseURL);

  return {
    name: 'views',
    services: [{ name: 'MNView', versions: ['v1', 'v2'] }],
    async open(kit) {
      services = scienceServices(kit, options.science ? { science: options.science } : {});
    },
    async onChange(change) {
      await services?.invalidate(change);
    },
    routes(app: Hono, version: ApiVersion, kit: ExtensionKit) {
      // The node's name and synchronize flag, from its own Node document (core's `GET /node`).
      const nodeInfo = nodeInfoReader(() => app.request('/node'));
      const listViews = secured(
        kit.operation('MNView.listViews', async () =>
          xmlResponse(OptionListCodec.encode({ key: 'theme', description: 'Views of objects this node renders (GET /views/{theme}/{id}); unknown themes render with default', option: [...themes.keys()] }, version)),
        ),
      );
      app.get('/views', listViews);
      app.get('/view', listViews);

      const view = kit.operation('MNView.view', async (c, ctx) => {
        const id = c.req.param('id') ?? '';
        if (id === '') throw fail('MNView.view', 'InvalidRequest', 'an identifier is required: GET /views/{theme}/{id}');
        const theme = themes.get(c.req.param('theme') ?? '') ?? fallback;
        // Access control as for get (v2: PID or SID).
        const s = services ?? scienceServices(kit);
        // Caches reflect every change committed so far by any process (a deleted and re-created
        // object's old page is never served) before the record is read and access checked.
        await s.catchUp();
        const record = await kit.objects.authorized(ctx, 'MNView.view', id, 'read');
        const api = apiBase(c, version, configuredBase());
        const node = await nodeInfo();
        const cn = typeof options.federation === 'function' ? options.federation() : options.federation;
        const base: UrlBase = { api, ...(node ? { node } : {}), ...(cn && node?.synchronize ? { federation: cn } : {}), ...(options.downloads === 'resolve' ? { downloadsByResolve: true } : {}) };
        const start = startParam(c);
        const anonymous = !ctx.session.authenticated && !kit.access.isPrivileged(ctx.session);
        const publicObject = kit.access.allows(publicSession(), record.sysmeta, 'read');
        const headers: Record<string, string> = {
          'Last-Modified': record.sysmeta.dateSysMetadataModified.toUTCString(),
          // What an authenticated caller sees (restricted members, private objects) is theirs alone.
          'Cache-Control': anonymous && publicObject ? 'no-cache' : 'private',
        };
        if (theme.contentSecurityPolicy) headers['Content-Security-Policy'] = theme.contentSecurityPolicy;

        // Anonymous views of cacheable themes: once per (theme, object version, package version, page).
        let chosen: PackageModel | null | undefined;
        let cacheKey: string | undefined;
        if (theme.cacheable && anonymous) {
          chosen = (await choosePackage(kit, s, ctx, record).catch(() => undefined)) ?? null;
          const sm = record.sysmeta;
          cacheKey = `${theme.name}\u0000${api}\u0000${node?.name ?? ''}\u0000${base.federation ?? ''}\u0000${sm.identifier}@${sm.serialVersion}\u0000${chosen ? `${chosen.mapRecord.sysmeta.identifier}@${chosen.mapRecord.sysmeta.serialVersion}` : '-'}\u0000${start}`;
          const hit = s.views.get(cacheKey);
          if (hit) return new Response(hit.body, { status: 200, headers: { ...headers, 'Content-Type': hit.mediaType } });
        }
        let gathered: LandingPage | undefined;
        const tctx = themeContext(kit, s, ctx, record, base, options.maxDocumentBytes, { start, ...(chosen !== undefined ? { package: chosen } : {}) }, (p) => (gathered = p));
        const out = await theme.render(tctx);
        const mediaType = out.mediaType ?? theme.mediaType;
        if (cacheKey && gathered) {
          const page = gathered;
          const bytes = typeof out.body === 'string' ? out.body.length * 2 : out.body.byteLength;
          s.views.set(cacheKey, { body: out.body, mediaType }, (pid) => page.dependsOn(pid), bytes, [record.sysmeta.identifier, ...(record.sysmeta.seriesId ? [record.sysmeta.seriesId] : [])]);
        }
        return new Response(out.body, { status: 200, headers: { ...headers, ...out.headers, 'Content-Type': mediaType } });
      });
      app.get('/views/:theme/:id{.+}', secured(view));
    },
  };
}

function themeContext(
  kit: ExtensionKit,
  services: ScienceServices,
  ctx: CallContext,
  record: ObjectRecord,
  base: UrlBase,
  maxBytes: number | undefined,
  landing: { start: number; package?: PackageModel | null },
  onPage: (page: LandingPage) => void,
): ThemeContext {
  let page: Promise<LandingPage> | undefined;
  return {
    record,
    page: () =>
      (page ??= gatherLanding(kit, services, ctx, record, base, landing).then((p) => {
        onPage(p);
        return p;
      })),
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
