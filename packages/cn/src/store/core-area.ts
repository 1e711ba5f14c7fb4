import { allFormats } from '@memberkit/types';
import type { DialectSql } from '@memberkit/adapter-sql';
import { sqlLiteral, type CnSchemaArea } from './cn-migrations.js';

/**
 * The CN core's tables: the object format vocabulary (listFormats/getFormat, seeded from the
 * vendored spec/formats/objectFormatListV2.xml, extended by `memberkit cn add-format`) and
 * identifier reservations (reserveIdentifier, generateIdentifier, hasReservation).
 */
export const coreArea: CnSchemaArea = {
  name: 'core',
  migrations: (d: DialectSql) => {
    const t = d.tableSuffix;
    return [
      [
        `CREATE TABLE mk_cn_formats (
          format_id   ${d.identifierType} NOT NULL PRIMARY KEY,
          position    INTEGER NOT NULL,
          format_name ${d.longTextType} NOT NULL,
          format_type ${d.shortType} NOT NULL,
          media_type  ${d.longTextType} NOT NULL,
          extension   ${d.longTextType} NOT NULL
        )${t}`,
        'CREATE INDEX mk_cn_formats_position ON mk_cn_formats (position)',
        ...allFormats().map(
          (f, i) =>
            `INSERT INTO mk_cn_formats (format_id, position, format_name, format_type, media_type, extension) VALUES (${sqlLiteral(d, f.formatId)}, ${i + 1}, ${sqlLiteral(d, f.formatName)}, ${sqlLiteral(d, f.formatType)}, ${sqlLiteral(d, f.mediaType)}, ${sqlLiteral(d, f.extension)})`,
        ),
        // One row per reserved identifier: its primary key makes concurrent reservations of
        // one identifier race to a single winner, in every process.
        `CREATE TABLE mk_cn_reservations (
          identifier ${d.identifierType} NOT NULL PRIMARY KEY,
          subject    ${d.subjectType} NOT NULL,
          created    BIGINT NOT NULL,
          expires    BIGINT NOT NULL
        )${t}`,
        'CREATE INDEX mk_cn_reservations_expires ON mk_cn_reservations (expires)',
      ],
    ];
  },
};
