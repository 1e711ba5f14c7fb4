import { createHash } from 'node:crypto';
import type { FC } from 'hono/jsx';
import { humanDate } from '../dates.js';
import type { EntityAttribute } from '../entities.js';
import { fileName, jsonLdOf, jsonLdScript, type LandingPage, type PackageFile } from '../landing.js';
import { coverageMap, placeLabel } from '../map/coverage-map.js';
import { httpUrl } from '../safe-url.js';
import type { Theme } from '../theme.js';

/** Entities of the metadata listed that are not files of this page. */
const MAX_OTHER_ENTITIES = 50;

export function humanSize(bytes: number | undefined): string {
  if (bytes === undefined) return '';
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) (v /= 1024), i++;
  return i === 0 ? `${bytes} bytes` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

const CSS = `
:root{--ink:#1d2a33;--muted:#5b6b76;--line:#dde3e8;--accent:#0b6e99;--accent-dark:#0a5a7d;--bg:#f6f8fa;--chip:#e8f1f6;--mark:#d9480f}
*{box-sizing:border-box}html{-webkit-text-size-adjust:100%}body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:var(--bg)}
a{color:var(--accent)}a:hover{color:var(--accent-dark)}
header.top{background:#0f3b57;color:#fff}header.top .bar{max-width:64rem;margin:0 auto;padding:.7rem 1.5rem;display:flex;flex-wrap:wrap;align-items:baseline;gap:.2rem .75rem}
.node-name{font-weight:600;font-size:1.05rem;letter-spacing:.01em}.node-kind{font-size:.8rem;color:#b9d3e3;letter-spacing:.04em;text-transform:uppercase}
main{max-width:64rem;margin:0 auto;padding:1.5rem}article{background:#fff;border:1px solid var(--line);border-radius:10px;padding:1.75rem 2rem;margin-bottom:1.25rem;min-width:0}
.kind{text-transform:uppercase;font-size:.75rem;letter-spacing:.08em;color:var(--muted);margin:0}
h1{font-size:1.75rem;line-height:1.25;margin:.25rem 0 .75rem;overflow-wrap:anywhere}h2{font-size:1.1rem;margin:1.75rem 0 .6rem;border-bottom:1px solid var(--line);padding-bottom:.3rem}
article h2.first{margin-top:0}
.creators{margin:0 0 .75rem;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1.25rem}.creators .org{color:var(--muted);font-size:.9rem}
.orcid{display:inline-block;font-size:.7rem;font-weight:600;background:#a6ce39;color:#fff;border-radius:3px;padding:0 .3rem;margin-left:.3rem;text-decoration:none;vertical-align:middle}
.facts{display:flex;flex-wrap:wrap;gap:.35rem 1.5rem;color:var(--muted);font-size:.9rem;margin:.5rem 0 1rem}.facts strong{color:var(--ink);font-weight:600}
.actions{display:flex;flex-wrap:wrap;align-items:center;gap:.6rem;margin:1.25rem 0}
.button{display:inline-block;padding:.55rem 1rem;border-radius:6px;border:1px solid var(--accent);text-decoration:none;font-size:.92rem;line-height:1.3}
.button.primary{background:var(--accent);color:#fff;font-weight:600}.button.primary:hover{background:var(--accent-dark);color:#fff}.button small{display:block;font-weight:400;font-size:.78rem;opacity:.9}
.citation{background:var(--bg);border-left:4px solid var(--accent);padding:.8rem 1rem;font-size:.95rem;margin:0;overflow-wrap:anywhere}
.abstract p{margin:.5rem 0}.chips{display:flex;flex-wrap:wrap;gap:.4rem;padding:0;margin:0;list-style:none}.chips li{background:var(--chip);border-radius:999px;padding:.1rem .75rem;font-size:.85rem}
.coverage{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,3fr);gap:1.25rem;align-items:start}.coverage p{margin:0 0 .6rem}.coverage .label{display:block;font-size:.78rem;text-transform:uppercase;letter-spacing:.06em;color:var(--muted)}
figure.map{margin:0}svg.map{display:block;width:100%;height:auto;border:1px solid #c9d9e4;border-radius:6px;background:#dcebf5}
svg.map .grid{fill:none;stroke:#c0d5e3;stroke-width:.6}svg.map .land{fill:#eef1e6;stroke:#9aa88a;stroke-width:.7;stroke-linejoin:round}
svg.map .box{fill:rgba(217,72,15,.16);stroke:var(--mark);stroke-width:2}svg.map .halo{fill:rgba(217,72,15,.22);stroke:none}svg.map .dot{fill:var(--mark);stroke:#fff;stroke-width:2}
figure.map figcaption{font-size:.78rem;color:var(--muted);margin-top:.35rem}
table{width:100%;border-collapse:collapse;font-size:.92rem}th,td{text-align:left;padding:.55rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}th{color:var(--muted);font-weight:600;font-size:.82rem;text-transform:uppercase;letter-spacing:.04em}
td.name{overflow-wrap:anywhere;width:34%}td.format{width:16%}td.name a{font-weight:600}td.size,th.size{white-space:nowrap;text-align:right}td.format{color:var(--muted);font-size:.85rem}
.pid{font-size:.75rem;color:var(--muted);overflow-wrap:anywhere}.badge{display:inline-block;font-size:.7rem;text-transform:uppercase;letter-spacing:.05em;background:var(--chip);color:var(--accent-dark);border-radius:3px;padding:0 .35rem;margin-left:.35rem;vertical-align:middle}
.desc{margin:0;overflow-wrap:anywhere}.desc.muted{color:var(--muted);font-size:.88rem}.entity-name{font-weight:600}
details.vars{margin-top:.35rem;font-size:.85rem}details.vars summary{cursor:pointer;color:var(--accent)}details.vars ul{margin:.35rem 0 0;padding-left:1.1rem}details.vars li{margin:.15rem 0}details.vars code{font-size:.82rem;background:var(--bg);padding:0 .25rem;border-radius:3px}.unit{color:var(--muted)}
.restricted{color:var(--muted);font-style:italic}.others{padding-left:1.1rem;font-size:.9rem}.others li{margin:.25rem 0}
dl.sm{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem 1rem;font-size:.88rem;margin:0}dl.sm dt{color:var(--muted)}dl.sm dd{margin:0;overflow-wrap:anywhere}
.pager{display:flex;gap:1rem;margin-top:.75rem;font-size:.9rem}footer{max-width:64rem;margin:0 auto;padding:0 1.5rem 2rem;font-size:.8rem;color:var(--muted)}
@media(max-width:760px){main{padding:.75rem}article{padding:1.1rem 1rem}h1{font-size:1.4rem}.coverage{grid-template-columns:minmax(0,1fr)}header.top .bar{padding:.6rem .9rem}
#files thead{display:none}#files tr{display:block;border-bottom:1px solid var(--line);padding:.5rem 0}#files td{display:block;border:0;padding:.1rem 0}#files td.size{text-align:left}dl.sm{grid-template-columns:minmax(0,1fr)}dl.sm dd{margin-bottom:.35rem}}
`;

/**
 * The page's policy: nothing loads and no script runs (the JSON-LD block is data); the only
 * style allowed is the stylesheet above, by hash (so the page has no style attributes).
 * The map is inline SVG geometry: it needs neither script nor any request.
 */
const CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(CSS).digest('base64')}'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/** What "Download all files (zip)" gives, for those who want to know (tooltip). */
const BAGIT_DETAIL =
  'A BagIt package (application/bagit-097): a standard zip holding the files in data/, a manifest of their checksums to verify them, and the metadata and resource map that describe them. Any unzip tool opens it.';

/** `<time>` with the machine-readable value, or the text as written when it is not a date. */
const When: FC<{ value: string | Date | undefined }> = ({ value }) => {
  const d = humanDate(value);
  if (!d) return null;
  return d.machine ? <time datetime={d.machine}>{d.text}</time> : <>{d.text}</>;
};

const TimeRange: FC<{ begin?: string | undefined; end?: string | undefined }> = ({ begin, end }) => {
  const b = humanDate(begin);
  const e = humanDate(end);
  if (b && e && b.text === e.text) return <When value={begin} />;
  if (b && e)
    return (
      <>
        <When value={begin} /> to <When value={end} />
      </>
    );
  if (b)
    return (
      <>
        from <When value={begin} />
      </>
    );
  if (e)
    return (
      <>
        until <When value={end} />
      </>
    );
  return null;
};

/** Coverage on a world outline (map/coverage-map.ts): zoomed to the boxes, points as markers. */
const CoverageMapFigure: FC<{ spatial: NonNullable<LandingPage['metadata']>['spatial'] }> = ({ spatial }) => {
  const m = coverageMap(spatial);
  return (
    <figure class="map">
      <svg class="map" id="coverage-map" viewBox={m.viewBox} role="img" aria-labelledby="map-title" xmlns="http://www.w3.org/2000/svg">
        <title id="map-title">Geographic coverage: {spatial.map(placeLabel).join('; ')}</title>
        <path class="grid" d={m.graticule} />
        <path class="land" d={m.land} />
        {m.boxes.map((b) => (
          <rect class="box" x={b.x} y={b.y} width={b.width} height={b.height}>
            <title>{b.label}</title>
          </rect>
        ))}
        {m.points.map((p) => (
          <g class="point">
            <title>{p.label}</title>
            <circle class="halo" cx={p.cx} cy={p.cy} r={13} />
            <circle class="dot" cx={p.cx} cy={p.cy} r={5.5} />
          </g>
        ))}
      </svg>
      <figcaption>
        {m.extent} · graticule every {m.step}° · coastlines: Natural Earth
      </figcaption>
    </figure>
  );
};

const Variables: FC<{ attributes: EntityAttribute[] }> = ({ attributes }) => (
  <details class="vars">
    <summary>
      {attributes.length} {attributes.length === 1 ? 'variable' : 'variables'}
    </summary>
    <ul>
      {attributes.map((a) => (
        <li>
          <code>{a.name}</code>
          {a.label && a.label !== a.name ? ` (${a.label})` : ''}
          {a.definition ? ` — ${a.definition}` : ''}
          {a.unit ? <span class="unit"> [{a.unit}]</span> : null}
        </li>
      ))}
    </ul>
  </details>
);

const Description: FC<{ f: PackageFile }> = ({ f }) => {
  const e = f.entity;
  if (!e) {
    if (f.role === 'metadata') return <p class="desc muted">Metadata describing the dataset</p>;
    if (f.role === 'resource map') return <p class="desc muted">The list of the dataset's files (OAI-ORE resource map)</p>;
    return null;
  }
  return (
    <>
      {e.name !== f.name ? <p class="desc entity-name">{e.name}</p> : null}
      {e.description ? <p class="desc">{e.description}</p> : null}
      {e.attributes.length ? <Variables attributes={e.attributes} /> : null}
    </>
  );
};

const FileRow: FC<{ f: PackageFile }> = ({ f }) =>
  f.readable ? (
    <tr>
      <td class="name">
        <a href={f.href} download={f.name}>
          {f.name}
        </a>
        {f.role !== 'data' ? <span class="badge">{f.role}</span> : null}
        {f.name !== f.pid ? <div class="pid">{f.pid}</div> : null}
      </td>
      <td class="description">
        <Description f={f} />
      </td>
      <td class="format">{f.formatName ?? f.formatId}</td>
      <td class="size">{humanSize(f.size)}</td>
    </tr>
  ) : (
    <tr class="restricted">
      <td class="name">{f.pid}</td>
      <td colspan={2}>not available to you (restricted, or held by another node)</td>
      <td class="size"></td>
    </tr>
  );

/** The citation with its closing link (LandingPage.citationUrl) as a link when it is http(s). */
const Citation: FC<{ page: LandingPage }> = ({ page }) => {
  const url = httpUrl(page.citationUrl);
  if (!url || !page.citation.endsWith(page.citationUrl)) return <>{page.citation}</>;
  return (
    <>
      {page.citation.slice(0, page.citation.length - page.citationUrl.length)}
      <a href={url} id="citation-link">
        {page.citationUrl}
      </a>
    </>
  );
};

/** Highwire Press tags: what reference managers (Zotero, Mendeley) and Google Scholar read. */
const CitationMeta: FC<{ page: LandingPage }> = ({ page }) => {
  const md = page.metadata;
  const date = humanDate(md?.pubDate)?.machine;
  const doi = page.citationUrl.startsWith('https://doi.org/') ? decodeURIComponent(page.citationUrl.slice('https://doi.org/'.length)) : undefined;
  return (
    <>
      <meta name="citation_title" content={page.title} />
      {(md?.creators ?? []).map((c) => (
        <meta name="citation_author" content={c.familyName ? `${c.familyName}${c.givenName ? `, ${c.givenName}` : ''}` : c.name} />
      ))}
      {date ? <meta name="citation_publication_date" content={date.slice(0, 10).replace(/-/g, '/')} /> : null}
      {md?.publisher ? <meta name="citation_publisher" content={md.publisher} /> : null}
      {doi ? <meta name="citation_doi" content={doi} /> : null}
    </>
  );
};

const Landing: FC<{ page: LandingPage }> = ({ page }) => {
  const md = page.metadata;
  const sm = page.record.sysmeta;
  const totals = page.fileTotals;
  const license = md?.license;
  const licenseUrl = httpUrl(license?.url);
  const ld = jsonLdOf(page);
  const nodeName = page.node?.name;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{page.title}</title>
        {md?.abstract ? <meta name="description" content={md.abstract.slice(0, 300)} /> : null}
        <CitationMeta page={page} />
        <link rel="canonical" href={page.urls.self} />
        <link rel="alternate" type="application/ld+json" href={page.urls.view(page.pid, 'jsonld')} />
        {page.metadataRecord ? <link rel="describedby" type="text/xml" href={page.urls.object(page.metadataRecord.sysmeta.identifier)} /> : null}
        <style dangerouslySetInnerHTML={{ __html: CSS }} />
        <script type="application/ld+json" dangerouslySetInnerHTML={{ __html: jsonLdScript(ld) }} />
      </head>
      <body>
        <header class="top">
          <div class="bar">
            <span class="node-name" id="node-name">
              {nodeName ?? 'DataONE Member Node'}
            </span>
            {nodeName ? <span class="node-kind">DataONE Member Node</span> : null}
          </div>
        </header>
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
                      <a class="orcid" href={httpUrl(c.orcid)} title={`ORCID ${c.orcid}`}>
                        iD
                      </a>
                    ) : null}
                    {c.organization && c.organization !== c.name ? <span class="org"> · {c.organization}</span> : null}
                  </li>
                ))}
              </ul>
            ) : null}
            <div class="facts">
              {md?.pubDate ? (
                <span id="published">
                  Published <When value={md.pubDate} />
                </span>
              ) : (
                <span id="published">
                  Uploaded <When value={sm.dateUploaded} />
                </span>
              )}
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
                <a class="button primary" id="download-package" href={page.urls.package} title={BAGIT_DETAIL}>
                  Download all files (zip)
                  <small>
                    {totals.readable} {totals.readable === 1 ? 'file' : 'files'}, {humanSize(totals.bytes)}
                  </small>
                </a>
              ) : (
                <a class="button primary" id="download-object" href={page.urls.object(page.pid)} download={fileName(page.record)}>
                  Download
                  <small>{humanSize(sm.size)}</small>
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
              <Citation page={page} />
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
                <ul class="chips" id="keywords">
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
                      <p class="time">
                        <span class="label">Time</span>
                        <TimeRange begin={t.begin} end={t.end} />
                      </p>
                    ))}
                    {md.spatial.map((s) => (
                      <p class="place">
                        <span class="label">Place</span>
                        {placeLabel(s)}
                      </p>
                    ))}
                  </div>
                  {md.spatial.length ? <CoverageMapFigure spatial={md.spatial} /> : <div />}
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
                  <th>Description</th>
                  <th>Format</th>
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
            {page.otherEntities.length ? (
              <>
                <h2>Also described in the metadata</h2>
                <ul class="others" id="other-entities">
                  {page.otherEntities.slice(0, MAX_OTHER_ENTITIES).map((e) => (
                    <li>
                      <strong>{e.name}</strong>
                      {e.description ? ` — ${e.description}` : ''}
                    </li>
                  ))}
                </ul>
              </>
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
              <dd id="uploaded">
                <When value={sm.dateUploaded} />
              </dd>
              {sm.archived ? (
                <>
                  <dt>Status</dt>
                  <dd>archived</dd>
                </>
              ) : null}
            </dl>
          </article>
        </main>
        <footer>
          {nodeName ? `${nodeName} · ` : ''}
          {page.node?.identifier ? `${page.node.identifier} · ` : ''}A DataONE Member Node served by memberkit
        </footer>
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
