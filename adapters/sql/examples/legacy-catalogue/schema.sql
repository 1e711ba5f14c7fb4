-- A small legacy archive catalogue, as many institutional archives keep one: datasets
-- (versioned: dataset_version, supersedes) and their files, joined by a view. memberkit
-- reads it (SELECT only) through the mapping in memberkit.config.json.
-- Runs on SQLite (node setup.mjs), PostgreSQL (psql -f schema.sql) and MariaDB/MySQL
-- (mariadb < schema.sql). Strings are joined with CONCAT, which all of them have: `||` is
-- logical OR on MariaDB and MySQL.

CREATE TABLE datasets (
  id              INTEGER PRIMARY KEY,
  accession       TEXT NOT NULL,             -- the archive's own dataset number
  dataset_version INTEGER NOT NULL,
  supersedes      INTEGER REFERENCES datasets (id),
  title           TEXT NOT NULL,
  owner_orcid     TEXT NOT NULL,
  is_public       BOOLEAN NOT NULL,
  created_at      TIMESTAMP NOT NULL,
  updated_at      TIMESTAMP NOT NULL
);

CREATE TABLE files (
  id          INTEGER PRIMARY KEY,
  dataset_id  INTEGER NOT NULL REFERENCES datasets (id),
  file_name   TEXT NOT NULL,
  relpath     TEXT NOT NULL,                 -- path under the files folder
  media_type  TEXT,
  size_bytes  INTEGER NOT NULL,
  md5         TEXT,                          -- kept for some files only
  updated_at  TIMESTAMP NOT NULL
);

-- One row per file of each dataset version: what memberkit publishes.
CREATE VIEW catalogue_files AS
SELECT f.id AS file_id,
       CONCAT(d.accession, '.v', d.dataset_version, '/', f.file_name) AS pid,
       CONCAT(d.accession, '/', f.file_name) AS series_key,
       d.dataset_version AS version,
       f.file_name, f.relpath, f.media_type, f.size_bytes, f.md5, d.owner_orcid,
       CASE WHEN d.is_public = TRUE THEN 'public' ELSE 'private' END AS visibility,
       CASE WHEN f.updated_at > d.updated_at THEN f.updated_at ELSE d.updated_at END AS modified_at,
       d.created_at
FROM files f JOIN datasets d ON d.id = f.dataset_id;

INSERT INTO datasets VALUES
  (1, 'lake-temps', 1, NULL, 'Lake surface temperatures', 'https://orcid.org/0000-0002-1825-0097', TRUE, '2023-05-01 09:00:00', '2023-05-01 09:00:00'),
  (2, 'lake-temps', 2, 1,    'Lake surface temperatures', 'https://orcid.org/0000-0002-1825-0097', TRUE, '2024-02-10 14:30:00', '2024-02-10 14:30:00'),
  (3, 'soil-cores', 1, NULL, 'Soil cores, embargoed',     'https://orcid.org/0000-0001-5109-3700', FALSE, '2024-03-01 08:00:00', '2024-03-01 08:00:00');

INSERT INTO files VALUES
  (1, 1, 'temps.csv',  'lake-temps/v1/temps.csv',  'text/csv',   59, 'bcd3ca01a5e8212777af0d3dd38cd190', '2023-05-01 09:00:00'),
  (2, 2, 'temps.csv',  'lake-temps/v2/temps.csv',  'text/csv',   80, NULL, '2024-02-10 14:30:00'),
  (3, 2, 'README.txt', 'lake-temps/v2/README.txt', 'text/plain', 62, NULL, '2024-02-10 14:30:00'),
  (4, 3, 'cores.csv',  'soil-cores/v1/cores.csv',  'text/csv',   35, NULL, '2024-03-01 08:00:00');
