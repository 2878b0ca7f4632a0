-- Setup for the bulk-copy workload: an unindexed table shaped like pgbench_accounts for
-- concurrent bulk loads, emptied so every run starts from the same (empty) relation size.
-- Safe to run again (IF NOT EXISTS, then TRUNCATE).
-- No primary key or index: a bulk load target whose cost is heap extension and WAL, as in
-- the "parallel COPY into one table" benchmarks.
CREATE TABLE IF NOT EXISTS pgwaitprof_copy_target (
  aid integer NOT NULL,
  bid integer,
  abalance integer,
  filler character(84)
);

TRUNCATE pgwaitprof_copy_target;
