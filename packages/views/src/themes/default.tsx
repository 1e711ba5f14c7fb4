import { createHash } from 'node:crypto';
import type { FC } from 'hono/jsx';
import { jsonLdOf, jsonLdScript, type LandingPage, type PackageFile } from '../landing.js';
import { httpUrl } from '../safe-url.js';
import type { Theme } from '../theme.js';

export function humanSize(bytes: number | undefined): string {
  if (bytes === undefined) return '';
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) (v /= 1024), i++;
  return i === 0 ? `${bytes} bytes` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

const CSS = `
:root{--ink:#1d2a33;--muted:#5b6b76;--line:#dde3e8;--accent:#0b6e99;--bg:#f6f8fa;--chip:#e8f1f6}
*{box-sizing:border-box}body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:var(--bg)}
a{color:var(--accent)}header.top{background:#0f3b57;color:#fff;padding:.6rem 1.5rem;font-size:.9rem;letter-spacing:.02em}
main{max-width:60rem;margin:0 auto;padding:1.5rem}article{background:#fff;border:1px solid var(--line);border-radius:10px;padding:1.75rem 2rem;margin-bottom:1.25rem}
.kind{text-transform:uppercase;font-size:.75rem;letter-spacing:.08em;color:var(--muted);margin:0}
h1{font-size:1.75rem;line-height:1.25;margin:.25rem 0 .75rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem;border-bottom:1px solid var(--line);padding-bottom:.25rem}
.creators{margin:0 0 .75rem;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1rem}.creators .org{color:var(--muted);font-size:.9rem}
.orcid{display:inline-block;font-size:.7rem;background:#a6ce39;color:#fff;border-radius:3px;padding:0 .3rem;margin-left:.25rem;text-decoration:none;vertical-align:middle}
.facts{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;color:var(--muted);font-size:.9rem;margin:.5rem 0 1rem}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:1rem 0}.button{display:inline-block;padding:.5rem .9rem;border-radius:6px;border:1px solid var(--accent);text-decoration:none;font-size:.9rem}
.button.primary{background:var(--accent);color:#fff}.citation{background:var(--bg);border-left:4px solid var(--accent);padding:.75rem 1rem;font-size:.95rem}
.abstract p{margin:.5rem 0}.chips{display:flex;flex-wrap:wrap;gap:.4rem;padding:0;list-style:none}.chips li{background:var(--chip);border-radius:999px;padding:.1rem .7rem;font-size:.85rem}
table{width:100%;border-collapse:collapse;font-size:.92rem}th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}th{color:var(--muted);font-weight:600}
td.size{white-space:nowrap;text-align:right}.restricted{color:var(--muted);font-style:italic}.role{font-size:.75rem;color:var(--muted)}
.coverage{display:grid;grid-template-columns:minmax(0,1fr) 18rem;gap:1rem;align-items:start}@media(max-width:700px){.coverage{grid-template-columns:1fr}article{padding:1.25rem}}
dl.sm{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;font-size:.88rem}dl.sm dt{color:var(--muted)}dl.sm dd{margin:0;word-break:break-all}
svg.map{width:100%;height:auto;border:1px solid var(--line);border-radius:6px;background:#eef5f9}
article h2.first{margin-top:0}th.size{text-align:right}.pager{display:flex;gap:1rem;margin-top:.75rem;font-size:.9rem}
`;

/**
 * The page's policy: nothing loads and no script runs (the JSON-LD block is data); the only
 * style allowed is the stylesheet above, by hash (so the page has no style attributes).
 */
const CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(CSS).digest('base64')}'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/** A small equirectangular frame with the bounding boxes drawn on it (no external tiles). */
const CoverageMap: FC<{ boxes: NonNullable<LandingPage['metadata']>['spatial'] }> = ({ boxes }) => (
  <svg class="map" viewBox="-180 -90 360 180" role="img" aria-label="Geographic coverage">
    {[-120, -60, 0, 60, 120].map((x) => (
      <line x1={x} y1={-90} x2={x} y2={90} stroke="#cfdde6" stroke-width="0.6" />
    ))}
    {[-60, -30, 0, 30, 60].map((y) => (
      <line x1={-180} y1={y} x2={180} y2={y} stroke="#cfdde6" stroke-width="0.6" />
    ))}
    {boxes.map((b) => {
      const w = Math.max(0, b.east - b.west);
      const h = Math.max(0, b.north - b.south);
      // Small areas get a marker too, so a field site is visible at world scale.
      return (
        <>
          <rect x={b.west} y={-b.north} width={Math.max(1, w)} height={Math.max(1, h)} fill="rgba(11,110,153,.35)" stroke="#0b6e99" stroke-width="1.2" />
          {w < 8 && h < 8 ? <circle cx={b.west + w / 2} cy={-(b.north + b.south) / 2} r={5} fill="none" stroke="#d9480f" stroke-width="1.5" /> : null}
        </>
      );
    })}
  </svg>
);

const FileRow: FC<{ f: PackageFile }> = ({ f }) =>
  f.readable ? (
    <tr>
      <td>
        <a href={f.href} download={f.name}>
          {f.name}
        </a>
        {f.name !== f.pid ? <div class="role">{f.pid}</div> : null}
      </td>
      <td>{f.formatName ?? f.formatId}</td>
      <td>{f.role}</td>
      <td class="size">{humanSize(f.size)}</td>
    </tr>
  ) : (
    <tr class="restricted">
      <td>{f.pid}</td>
      <td colspan={2}>not available to you (restricted, or held by another node)</td>
      <td class="size"></td>
    </tr>
  );

const Landing: FC<{ page: LandingPage }> = ({ page }) => {
  const md = page.metadata;
  const sm = page.record.sysmeta;
  const totals = page.fileTotals;
  const license = md?.license;
  const licenseUrl = httpUrl(license?.url);
  const ld = jsonLdOf(page);
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{page.title}</title>
        {md?.abstract ? <meta name="description" content={md.abstract.slice(0, 300)} /> : null}
        <link rel="canonical" href={page.urls.self} />
        <link rel="alternate" type="application/ld+json" href={page.urls.view(page.pid, 'jsonld')} />
        {page.metadataRecord ? <link rel="describedby" type="text/xml" href={page.urls.object(page.metadataRecord.sysmeta.identifier)} /> : null}
        <style dangerouslySetInnerHTML={{ __html: CSS }} />
        <script type="application/ld+json" dangerouslySetInnerHTML={{ __html: jsonLdScript(ld) }} />
      </head>
      <body>
        <header class="top">DataONE Member Node · memberkit</header>
        <main>
          <article>
            <p class="kind">{page.mapRecord && page.mapRecord !== page.record && page.metadataRecord !== page.record ? `File in dataset` : page.mapRecord ? 'Dataset' : 'Object'}</p>
            <h1 id="title">{page.title}</h1>
            {md?.creators.length ? (
              <ul class="creators" id="creators">
                {md.creators.map((c) => (
                  <li>
                    <span class="creator">{c.name}</span>
                    {httpUrl(c.orcid) ? (
                      <a class="orcid" href={httpUrl(c.orcid)} title={c.orcid}>
                        iD
                      </a>
                    ) : null}
                    {c.organization && c.organization !== c.name ? <span class="org"> · {c.organization}</span> : null}
                  </li>
                ))}
              </ul>
            ) : null}
            <div class="facts">
              {md?.pubDate ? <span>Published {md.pubDate}</span> : <span>Uploaded {sm.dateUploaded.toISOString().slice(0, 10)}</span>}
              {md?.publisher ? <span>{md.publisher}</span> : null}
              {license && (licenseUrl || license.name) ? (
                <span id="license">
                  License:{' '}
                  {licenseUrl ? (
                    <a href={licenseUrl} rel="license">
                      {license.name && license.name.length < 80 ? license.name : licenseUrl}
                    </a>
                  ) : (
                    license.name
                  )}
                </span>
              ) : null}
            </div>
            <div class="actions">
              {page.urls.package ? (
                <a class="button primary" id="download-package" href={page.urls.package}>
                  Download all ({totals.readable} files, {humanSize(totals.bytes)}) as BagIt zip
                </a>
              ) : (
                <a class="button primary" href={page.urls.object(page.pid)}>
                  Download ({humanSize(sm.size)})
                </a>
              )}
              {page.metadataRecord ? (
                <a class="button" href={page.urls.view(page.pid, 'metadata')}>
                  Metadata (XML)
                </a>
              ) : null}
              <a class="button" href={page.urls.view(page.pid, 'jsonld')}>
                JSON-LD
              </a>
            </div>
            <h2>Cite this dataset</h2>
            <p class="citation" id="citation">
              {page.citation}
            </p>
            {md?.abstract ? (
              <>
                <h2>Abstract</h2>
                <div class="abstract" id="abstract">
                  {md.abstract.split(/\n\n+/).map((p) => (
                    <p>{p}</p>
                  ))}
                </div>
              </>
            ) : null}
            {md?.keywords.length ? (
              <>
                <h2>Keywords</h2>
                <ul class="chips">
                  {md.keywords.map((k) => (
                    <li>{k}</li>
                  ))}
                </ul>
              </>
            ) : null}
            {md && (md.temporal.length || md.spatial.length) ? (
              <>
                <h2>Coverage</h2>
                <div class="coverage" id="coverage">
                  <div>
                    {md.temporal.map((t) => (
                      <p>
                        <strong>Time:</strong> {t.begin === t.end ? t.begin : `${t.begin ?? '…'} to ${t.end ?? '…'}`}
                      </p>
                    ))}
                    {md.spatial.map((s) => (
                      <p>
                        <strong>Place:</strong> {s.description ? `${s.description} ` : ''}({s.south}° to {s.north}° N, {s.west}° to {s.east}° E)
                      </p>
                    ))}
                  </div>
                  {md.spatial.length ? <CoverageMap boxes={md.spatial} /> : <div />}
                </div>
              </>
            ) : null}
          </article>
          <article>
            <h2 class="first">Files</h2>
            {totals.members > page.files.length ? (
              <p class="facts" id="files-range">
                {page.files.length ? `${page.filePage.start + 1}–${page.filePage.start + page.files.length}` : 'none'} of {totals.members} files
              </p>
            ) : null}
            <table id="files">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Format</th>
                  <th>Role</th>
                  <th class="size">Size</th>
                </tr>
              </thead>
              <tbody>
                {page.files.map((f) => (
                  <FileRow f={f} />
                ))}
              </tbody>
            </table>
            {page.filePage.next || page.filePage.previous ? (
              <nav class="pager">
                {page.filePage.previous ? (
                  <a rel="prev" id="files-previous" href={page.filePage.previous}>
                    Previous {page.filePage.size}
                  </a>
                ) : null}
                {page.filePage.next ? (
                  <a rel="next" id="files-next" href={page.filePage.next}>
                    Next {page.filePage.size}
                  </a>
                ) : null}
              </nav>
            ) : null}
          </article>
          <article>
            <h2 class="first">Identifiers and versions</h2>
            <dl class="sm" id="versions">
              <dt>Identifier</dt>
              <dd>{page.pid}</dd>
              {page.versions.seriesId ? (
                <>
                  <dt>Series</dt>
                  <dd>{page.versions.seriesId}</dd>
                </>
              ) : null}
              {(page.metadataRecord === page.record || page.mapRecord === page.record ? (md?.alternateIdentifiers ?? []) : []).map((a) => (
                <>
                  <dt>Also known as</dt>
                  <dd>{a}</dd>
                </>
              ))}
              {page.versions.obsoletes ? (
                <>
                  <dt>Previous version</dt>
                  <dd>
                    <a rel="prev" href={page.urls.view(page.versions.obsoletes)}>
                      {page.versions.obsoletes}
                    </a>
                  </dd>
                </>
              ) : null}
              {page.versions.obsoletedBy ? (
                <>
                  <dt>Newer version</dt>
                  <dd>
                    <a rel="next" href={page.urls.view(page.versions.obsoletedBy)}>
                      {page.versions.obsoletedBy}
                    </a>
                  </dd>
                </>
              ) : null}
              <dt>Format</dt>
              <dd>{sm.formatId}</dd>
              <dt>Checksum</dt>
              <dd>
                {sm.checksum.algorithm} {sm.checksum.value}
              </dd>
              <dt>Uploaded</dt>
              <dd>{sm.dateUploaded.toISOString()}</dd>
              {sm.archived ? (
                <>
                  <dt>Status</dt>
                  <dd>archived</dd>
                </>
              ) : null}
            </dl>
          </article>
        </main>
      </body>
    </html>
  );
};

/** The HTML landing page: title, creators, citation, abstract, coverage, files, versions, JSON-LD. */
export const defaultTheme: Theme = {
  name: 'default',
  description: 'HTML landing page: citation, abstract, coverage, the files of the package with download links, versions, schema.org JSON-LD',
  mediaType: 'text/html; charset=utf-8',
  contentSecurityPolicy: CSP,
  cacheable: true,
  async render(ctx) {
    const page = await ctx.page();
    const el = <Landing page={page} />;
    return { body: `<!DOCTYPE html>${await el.toString()}` };
  },
};
