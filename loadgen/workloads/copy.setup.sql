-- Setup for the copy workload: the unindexed table real COPY loads, shaped like
-- pgbench_accounts (LIKE copies no index), emptied so every run starts from an empty relation,
-- as in the parallel COPY thread ("truncate and drop the indexes on the original table").
-- Safe to run again (IF NOT EXISTS, then TRUNCATE).
SET client_min_messages = warning;  -- no NOTICE when the table exists

CREATE TABLE IF NOT EXISTS pgwaitprof_copy_accounts (LIKE pgbench_accounts);

TRUNCATE pgwaitprof_copy_accounts;
