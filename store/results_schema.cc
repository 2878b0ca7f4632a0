// The results database's migrations. Append new ones; never edit one that was released.
#include "store/results_db.h"

namespace pgwaitprof::store {

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> all = {
      {1, "runs, wait profiles, timelines and matrix membership", R"sql(
CREATE TABLE pgwaitprof.runs (
  run_id             text PRIMARY KEY,
  host               text NOT NULL,
  label              text NOT NULL,
  status             text NOT NULL,
  error              text NOT NULL,
  workload           text NOT NULL,
  variant            text NOT NULL,
  clients            integer NOT NULL,
  started_at         timestamptz,
  ended_at           timestamptz,
  duration_s         double precision NOT NULL,
  tps                double precision,
  tps_ci95           double precision,
  latency_ms         double precision,
  aas                double precision NOT NULL,
  top_wait           text NOT NULL,
  class_aas          jsonb NOT NULL,
  server_version     text NOT NULL,
  server_version_num integer NOT NULL,
  kernel             text NOT NULL,
  settings           jsonb NOT NULL,
  environment        jsonb NOT NULL,
  report             jsonb NOT NULL,
  uploaded_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX runs_host_started ON pgwaitprof.runs (host, started_at);
CREATE INDEX runs_started ON pgwaitprof.runs (started_at);
CREATE TABLE pgwaitprof.run_waits (
  run_id          text NOT NULL REFERENCES pgwaitprof.runs ON DELETE CASCADE,
  backend_type    text NOT NULL,
  state           text NOT NULL,
  wait_event_type text NOT NULL,
  wait_event      text NOT NULL,
  samples         bigint NOT NULL,
  aas             double precision NOT NULL,
  idle            boolean NOT NULL,
  PRIMARY KEY (run_id, backend_type, state, wait_event_type, wait_event)
);
CREATE TABLE pgwaitprof.run_timeline (
  run_id     text NOT NULL REFERENCES pgwaitprof.runs ON DELETE CASCADE,
  start_s    double precision NOT NULL,
  duration_s double precision NOT NULL,
  tps        double precision,
  latency_ms double precision,
  aas        double precision NOT NULL,
  class_aas  jsonb NOT NULL,
  PRIMARY KEY (run_id, start_s)
);
CREATE TABLE pgwaitprof.matrix_runs (
  matrix  text NOT NULL,
  run_id  text NOT NULL REFERENCES pgwaitprof.runs ON DELETE CASCADE,
  variant text NOT NULL,
  repeat  integer NOT NULL,
  PRIMARY KEY (matrix, run_id)
);
)sql"},
      {2, "each run's origin (host and directory) and its summary", R"sql(
ALTER TABLE pgwaitprof.runs ADD COLUMN origin_host text, ADD COLUMN origin_dir text,
  ADD COLUMN summary jsonb, ADD COLUMN summary_version integer NOT NULL DEFAULT 0;
-- Runs pushed before: their origin host is the one their report names; the first push of the
-- run from that host records its directory.
UPDATE pgwaitprof.runs SET origin_host = host;
ALTER TABLE pgwaitprof.runs ALTER COLUMN origin_host SET NOT NULL;
)sql"},
  };
  return all;
}

int latest_schema_version() { return migrations().back().version; }

}  // namespace pgwaitprof::store
