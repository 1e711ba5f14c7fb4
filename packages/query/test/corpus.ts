/**
 * A small corpus of realistic science metadata records (EML 2.1.1 / 2.2.0 and ISO 19139),
 * two data files and an OAI-ORE resource map, for the query tests.
 */
export interface Person {
  given: string;
  family: string;
  org?: string;
  orcid?: string;
}

export interface RecordSpec {
  pid: string;
  kind: 'eml211' | 'eml220' | 'iso';
  title: string;
  abstract: string;
  keywords: string[];
  creators: Person[];
  begin: string;
  end: string;
  /** west, east, south, north */
  bbox: [number, number, number, number];
  /** 'public' (default), 'private' (rightsHolder only) or a subject granted read. */
  access?: 'public' | 'private' | { readBy: string };
}

const x = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export const RECORDS: RecordSpec[] = [
  {
    pid: 'corpus.eml-kelp',
    kind: 'eml211',
    title: 'Kelp forest community dynamics: cover of sessile invertebrates, Santa Barbara Channel',
    abstract: 'Percent cover of sessile invertebrates and understory algae in permanent transects at nine reefs.',
    keywords: ['kelp forest', 'benthic cover', 'invertebrates'],
    creators: [{ given: 'Daniel', family: 'Reedman', org: 'University of California Santa Barbara', orcid: '0000-0001-5109-3700' }],
    begin: '2000-08-01',
    end: '2014-12-31',
    bbox: [-120.12, -120.11, 34.46, 34.47],
  },
  {
    pid: 'corpus.eml-snow',
    kind: 'eml220',
    title: 'Snow depth and snow water equivalent at Niwot Ridge saddle',
    abstract: 'Biweekly snow depth measurements along a 500 m transect on the Niwot Ridge saddle, Colorado Front Range.',
    keywords: ['snow depth', 'snowpack', 'alpine tundra'],
    creators: [{ given: 'Anna', family: 'Kowalski', org: 'University of Colorado Boulder' }],
    begin: '1993-01-01',
    end: '2019-12-31',
    bbox: [-105.6, -105.5, 40.0, 40.1],
  },
  {
    pid: 'corpus.eml-soil',
    kind: 'eml220',
    title: 'Soil moisture and temperature profiles at Toolik Lake',
    abstract: 'Hourly soil moisture and soil temperature at five depths in moist acidic tundra underlain by permafrost.',
    keywords: ['soil moisture', 'permafrost', 'arctic'],
    creators: [
      { given: 'Maria', family: 'Gonzalez', org: 'University of Alaska Fairbanks' },
      { given: 'Wei', family: 'Li', org: 'University of Alaska Fairbanks' },
    ],
    begin: '2016-06-01',
    end: '2019-09-30',
    bbox: [-149.6, -149.5, 68.6, 68.7],
  },
  {
    pid: 'corpus.eml-stream',
    kind: 'eml211',
    title: 'Stream water chemistry of the Hubbard Brook experimental watersheds',
    abstract: 'Weekly grab samples analysed for nitrate, sulfate, calcium and pH in nine gauged watersheds.',
    keywords: ['stream chemistry', 'nitrate', 'watersheds'],
    creators: [{ given: 'Robert', family: "O'Neil", org: 'Cary Institute of Ecosystem Studies' }],
    begin: '1963-06-01',
    end: '2020-12-31',
    bbox: [-71.8, -71.7, 43.9, 44.0],
  },
  {
    pid: 'corpus.eml-birds',
    kind: 'eml211',
    title: 'Breeding bird survey of Konza Prairie grassland watersheds',
    abstract: 'Point counts of breeding birds on burned and grazed tallgrass prairie watersheds.',
    keywords: ['birds', 'grassland', 'fire'],
    creators: [{ given: 'Jennifer', family: 'Smith', org: 'Kansas State University' }],
    begin: '1981-05-01',
    end: '2018-07-31',
    bbox: [-96.6, -96.5, 39.05, 39.1],
  },
  {
    pid: 'corpus.eml-coral',
    kind: 'eml220',
    title: 'Coral reef fish abundance around Moorea, French Polynesia',
    abstract: 'Annual visual census of reef fish on the fore reef, back reef and fringing reef habitats.',
    keywords: ['coral reef', 'fish', 'abundance'],
    creators: [{ given: 'Hélène', family: 'Dubois', org: 'CRIOBE' }],
    begin: '2005-08-01',
    end: '2022-08-31',
    bbox: [-149.9, -149.7, -17.6, -17.4],
  },
  {
    pid: 'corpus.eml-lakeice',
    kind: 'eml211',
    title: 'Lake ice phenology of Wisconsin lakes',
    abstract: 'Dates of ice on and ice off for Lake Mendota and Lake Monona since the 1850s.',
    keywords: ['lake ice', 'phenology', 'climate change'],
    creators: [{ given: 'John', family: 'Magnuson', org: 'University of Wisconsin' }],
    begin: '1855-12-01',
    end: '2021-04-30',
    bbox: [-89.8, -89.3, 42.9, 46.1],
  },
  {
    pid: 'corpus.eml-plankton',
    kind: 'eml220',
    title: 'Zooplankton abundance in Lake Mendota',
    abstract: 'Biweekly vertical net tows identifying crustacean zooplankton to species.',
    keywords: ['zooplankton', 'lakes'],
    creators: [{ given: 'Emily', family: 'Chen', org: 'University of Wisconsin' }],
    begin: '1995-04-01',
    end: '2021-10-31',
    bbox: [-89.5, -89.3, 43.0, 43.2],
    access: 'private',
  },
  {
    pid: 'corpus.eml-penguins',
    kind: 'eml211',
    title: 'Penguin colony counts on the western Antarctic Peninsula',
    abstract: 'Adelie, gentoo and chinstrap penguin breeding pairs counted near Palmer Station.',
    keywords: ['penguins', 'Antarctica', 'seabirds'],
    creators: [{ given: 'William', family: 'Fraser', org: 'Polar Oceans Research Group' }],
    begin: '1991-11-01',
    end: '2020-02-28',
    bbox: [-64.2, -63.9, -64.9, -64.7],
  },
  {
    pid: 'corpus.eml-forest',
    kind: 'eml220',
    title: 'Tree growth and mortality in old-growth Douglas-fir forest',
    abstract: 'Remeasurement of permanent plots in the H.J. Andrews Experimental Forest.',
    keywords: ['forest dynamics', 'Douglas-fir'],
    creators: [{ given: 'Mark', family: 'Harmon', org: 'Oregon State University' }],
    begin: '1910-01-01',
    end: '2019-12-31',
    bbox: [-122.3, -122.1, 44.2, 44.3],
  },
  {
    pid: 'corpus.iso-salinity',
    kind: 'iso',
    title: 'Sea surface salinity from glider transects, Gulf of Maine, 2018',
    abstract: 'Salinity and temperature profiles from Slocum glider missions across Wilkinson Basin.',
    keywords: ['OCEAN SALINITY', 'GLIDERS'],
    creators: [{ given: 'Leila', family: 'Haddad', org: 'Bigelow Laboratory for Ocean Sciences', orcid: '0000-0003-1415-9269' }],
    begin: '2018-04-02',
    end: '2018-10-30',
    bbox: [-70.5, -68.0, 42.1, 43.9],
  },
  {
    pid: 'corpus.iso-sst',
    kind: 'iso',
    title: 'Sea surface temperature from moored buoys, California Current',
    abstract: 'Hourly temperature from surface moorings along the central California coast.',
    keywords: ['OCEAN TEMPERATURE', 'BUOYS'],
    creators: [{ given: 'Carlos', family: 'Ramirez', org: 'Scripps Institution of Oceanography' }],
    begin: '2010-01-01',
    end: '2015-12-31',
    bbox: [-125.0, -120.0, 32.0, 38.0],
  },
  {
    pid: 'corpus.iso-bathymetry',
    kind: 'iso',
    title: 'Multibeam bathymetry of Monterey Canyon',
    abstract: 'Gridded 5 m multibeam sonar soundings of the upper Monterey Canyon.',
    keywords: ['BATHYMETRY', 'SEAFLOOR'],
    creators: [{ given: 'Nnamdi', family: 'Okafor', org: 'Monterey Bay Aquarium Research Institute' }],
    begin: '2012-03-01',
    end: '2012-03-20',
    bbox: [-122.1, -121.8, 36.6, 36.8],
  },
  {
    pid: 'corpus.iso-seaice',
    kind: 'iso',
    title: 'Arctic sea ice extent from passive microwave radiometry',
    abstract: 'Daily sea ice concentration gridded at 25 km from SMMR, SSM/I and SSMIS.',
    keywords: ['SEA ICE', 'arctic'],
    creators: [{ given: 'Ingrid', family: 'Nilsson', org: 'National Snow and Ice Data Center' }],
    begin: '1979-01-01',
    end: '2022-12-31',
    bbox: [-180, 180, 60, 90],
  },
  {
    pid: 'corpus.iso-glacier',
    kind: 'iso',
    title: 'Glacier mass balance in the Swiss Alps',
    abstract: 'Seasonal mass balance from stake and snow pit measurements on twenty glaciers.',
    keywords: ['GLACIERS', 'MASS BALANCE'],
    creators: [{ given: 'Matthias', family: 'Huss', org: 'ETH Zurich' }],
    begin: '1914-10-01',
    end: '2021-09-30',
    bbox: [7.0, 10.5, 45.8, 47.0],
  },
  {
    pid: 'corpus.iso-hurricane',
    kind: 'iso',
    title: 'Hurricane storm surge observations, Gulf Coast',
    abstract: 'Water level sensors deployed ahead of Hurricane Katrina landfall.',
    keywords: ['STORM SURGE', 'HURRICANES'],
    creators: [{ given: 'Grace', family: 'Thompson', org: 'US Geological Survey' }],
    begin: '2005-08-23',
    end: '2005-08-31',
    bbox: [-95.0, -85.0, 28.0, 31.0],
    access: { readBy: 'other' },
  },
];

export function emlXml(r: RecordSpec): string {
  const ns = r.kind === 'eml211' ? 'eml://ecoinformatics.org/eml-2.1.1' : 'https://eml.ecoinformatics.org/eml-2.2.0';
  const [w, e, s, n] = r.bbox;
  return `<?xml version="1.0" encoding="UTF-8"?>
<eml:eml packageId="${x(r.pid)}" system="knb" xmlns:eml="${ns}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <dataset>
    <title>${x(r.title)}</title>
${r.creators
  .map(
    (c) => `    <creator>
      <individualName><givenName>${x(c.given)}</givenName><surName>${x(c.family)}</surName></individualName>
      ${c.org ? `<organizationName>${x(c.org)}</organizationName>` : ''}
      ${c.orcid ? `<userId directory="https://orcid.org">https://orcid.org/${c.orcid}</userId>` : ''}
    </creator>`,
  )
  .join('\n')}
    <pubDate>2021</pubDate>
    <abstract><para>${x(r.abstract)}</para></abstract>
    <keywordSet>${r.keywords.map((k) => `<keyword>${x(k)}</keyword>`).join('')}<keywordThesaurus>LTER Controlled Vocabulary</keywordThesaurus></keywordSet>
    <intellectualRights><para>This data package is released under the Creative Commons Attribution 4.0 International license.</para></intellectualRights>
    <coverage>
      <geographicCoverage>
        <geographicDescription>Study area of ${x(r.title)}</geographicDescription>
        <boundingCoordinates>
          <westBoundingCoordinate>${w}</westBoundingCoordinate><eastBoundingCoordinate>${e}</eastBoundingCoordinate>
          <northBoundingCoordinate>${n}</northBoundingCoordinate><southBoundingCoordinate>${s}</southBoundingCoordinate>
        </boundingCoordinates>
      </geographicCoverage>
      <temporalCoverage><rangeOfDates>
        <beginDate><calendarDate>${r.begin}</calendarDate></beginDate>
        <endDate><calendarDate>${r.end}</calendarDate></endDate>
      </rangeOfDates></temporalCoverage>
    </coverage>
    <contact><individualName><surName>Information Manager</surName></individualName></contact>
    <methods><methodStep><description><para>Standard protocols of the site; see the site handbook for instrument calibration.</para></description></methodStep></methods>
  </dataset>
</eml:eml>
`;
}

export function isoXml(r: RecordSpec): string {
  const [w, e, s, n] = r.bbox;
  return `<?xml version="1.0" encoding="UTF-8"?>
<gmd:MD_Metadata xmlns:gmd="http://www.isotc211.org/2005/gmd" xmlns:gco="http://www.isotc211.org/2005/gco"
    xmlns:gml="http://www.opengis.net/gml/3.2" xmlns:gmx="http://www.isotc211.org/2005/gmx" xmlns:xlink="http://www.w3.org/1999/xlink">
  <gmd:fileIdentifier><gco:CharacterString>${x(r.pid)}</gco:CharacterString></gmd:fileIdentifier>
  <gmd:language><gco:CharacterString>eng</gco:CharacterString></gmd:language>
  <gmd:identificationInfo>
    <gmd:MD_DataIdentification>
      <gmd:citation>
        <gmd:CI_Citation>
          <gmd:title><gco:CharacterString>${x(r.title)}</gco:CharacterString></gmd:title>
          <gmd:date><gmd:CI_Date><gmd:date><gco:Date>2020-02-11</gco:Date></gmd:date>
            <gmd:dateType><gmd:CI_DateTypeCode codeList="http://www.isotc211.org/2005/resources/Codelist/gmxCodelists.xml#CI_DateTypeCode" codeListValue="publication">publication</gmd:CI_DateTypeCode></gmd:dateType></gmd:CI_Date></gmd:date>
${r.creators
  .map(
    (c) => `          <gmd:citedResponsibleParty>
            <gmd:CI_ResponsibleParty>
              ${c.orcid ? `<gmd:individualName><gmx:Anchor xlink:href="https://orcid.org/${c.orcid}">${x(c.family)}, ${x(c.given)}</gmx:Anchor></gmd:individualName>` : `<gmd:individualName><gco:CharacterString>${x(c.family)}, ${x(c.given)}</gco:CharacterString></gmd:individualName>`}
              ${c.org ? `<gmd:organisationName><gco:CharacterString>${x(c.org)}</gco:CharacterString></gmd:organisationName>` : ''}
              <gmd:role><gmd:CI_RoleCode codeList="http://www.isotc211.org/2005/resources/Codelist/gmxCodelists.xml#CI_RoleCode" codeListValue="author">author</gmd:CI_RoleCode></gmd:role>
            </gmd:CI_ResponsibleParty>
          </gmd:citedResponsibleParty>`,
  )
  .join('\n')}
        </gmd:CI_Citation>
      </gmd:citation>
      <gmd:abstract><gco:CharacterString>${x(r.abstract)}</gco:CharacterString></gmd:abstract>
      <gmd:descriptiveKeywords><gmd:MD_Keywords>
${r.keywords.map((k) => `        <gmd:keyword><gco:CharacterString>${x(k)}</gco:CharacterString></gmd:keyword>`).join('\n')}
      </gmd:MD_Keywords></gmd:descriptiveKeywords>
      <gmd:extent><gmd:EX_Extent>
        <gmd:geographicElement><gmd:EX_GeographicBoundingBox>
          <gmd:westBoundLongitude><gco:Decimal>${w}</gco:Decimal></gmd:westBoundLongitude>
          <gmd:eastBoundLongitude><gco:Decimal>${e}</gco:Decimal></gmd:eastBoundLongitude>
          <gmd:southBoundLatitude><gco:Decimal>${s}</gco:Decimal></gmd:southBoundLatitude>
          <gmd:northBoundLatitude><gco:Decimal>${n}</gco:Decimal></gmd:northBoundLatitude>
        </gmd:EX_GeographicBoundingBox></gmd:geographicElement>
        <gmd:temporalElement><gmd:EX_TemporalExtent><gmd:extent>
          <gml:TimePeriod gml:id="tp1"><gml:beginPosition>${r.begin}</gml:beginPosition><gml:endPosition>${r.end}</gml:endPosition></gml:TimePeriod>
        </gmd:extent></gmd:EX_TemporalExtent></gmd:temporalElement>
      </gmd:EX_Extent></gmd:extent>
    </gmd:MD_DataIdentification>
  </gmd:identificationInfo>
</gmd:MD_Metadata>
`;
}

export function formatIdOf(r: RecordSpec): string {
  return r.kind === 'eml211' ? 'eml://ecoinformatics.org/eml-2.1.1' : r.kind === 'eml220' ? 'https://eml.ecoinformatics.org/eml-2.2.0' : 'http://www.isotc211.org/2005/gmd';
}

export function recordXml(r: RecordSpec): string {
  return r.kind === 'iso' ? isoXml(r) : emlXml(r);
}

export const DATA_FILES = [
  { pid: 'corpus.kelp_cover.csv', fileName: 'kelp_cover.csv', content: 'site,date,transect,taxon,percent_cover\nAQUE,2001-08-14,1,SF,12.5\nAQUE,2001-08-14,2,SF,9.0\n' },
  { pid: 'corpus.penguin_counts.csv', fileName: 'penguin_counts.csv', content: 'colony,season,species,pairs\nHumble,1991,ADPE,1020\nLitchfield,1991,ADPE,884\n' },
];

const resolve = (pid: string) => `https://cn.dataone.org/cn/v2/resolve/${encodeURIComponent(pid)}`;

/** An OAI-ORE resource map: `metadata` documents each of `data`. */
export function resourceMapXml(mapPid: string, metadata: string, data: string[]): string {
  const agg = `${resolve(mapPid)}#aggregation`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ore="http://www.openarchives.org/ore/terms/"
         xmlns:dcterms="http://purl.org/dc/terms/" xmlns:cito="http://purl.org/spar/cito/">
  <rdf:Description rdf:about="${resolve(mapPid)}">
    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/ResourceMap"/>
    <dcterms:identifier>${x(mapPid)}</dcterms:identifier>
    <ore:describes rdf:resource="${agg}"/>
  </rdf:Description>
  <rdf:Description rdf:about="${agg}">
    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/Aggregation"/>
    <ore:aggregates rdf:resource="${resolve(metadata)}"/>
${data.map((d) => `    <ore:aggregates rdf:resource="${resolve(d)}"/>`).join('\n')}
  </rdf:Description>
  <rdf:Description rdf:about="${resolve(metadata)}">
    <dcterms:identifier>${x(metadata)}</dcterms:identifier>
${data.map((d) => `    <cito:documents rdf:resource="${resolve(d)}"/>`).join('\n')}
  </rdf:Description>
${data
  .map(
    (d) => `  <rdf:Description rdf:about="${resolve(d)}">
    <dcterms:identifier>${x(d)}</dcterms:identifier>
    <cito:isDocumentedBy rdf:resource="${resolve(metadata)}"/>
  </rdf:Description>`,
  )
  .join('\n')}
</rdf:RDF>
`;
}

export const RESOURCE_MAP = { pid: 'corpus.resource_map_kelp', metadata: 'corpus.eml-kelp', data: ['corpus.kelp_cover.csv'] };
