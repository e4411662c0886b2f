#!/usr/bin/env bash
# Run once by the postgres image, when its volume is first initialised (compose.yaml): the
# service's own login role `leadintake` (no superuser) owning the database `leadintake`. The
# service needs nothing more: its migrations create pg_trgm, a trusted extension the database's
# owner may create, and pg-boss's schema. The password comes from LEADINTAKE_DB_PASSWORD; changing
# it later is `ALTER ROLE leadintake PASSWORD '…'` (this script does not run again).
set -euo pipefail
: "${LEADINTAKE_DB_PASSWORD:?LEADINTAKE_DB_PASSWORD is required}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v password="$LEADINTAKE_DB_PASSWORD" <<'SQL'
CREATE ROLE leadintake LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'password';
CREATE DATABASE leadintake OWNER leadintake;
REVOKE ALL ON DATABASE leadintake FROM PUBLIC;
SQL
