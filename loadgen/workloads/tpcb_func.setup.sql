-- Setup for the tpcb-func workload: the five TPC-B statements of pgbench's tpcb-like script as
-- one plpgsql function, so a transaction costs one client round trip instead of seven. Run once
-- after "pgbench -i"; safe to run again (CREATE OR REPLACE).
DO $$
BEGIN
  IF to_regclass('pgbench_accounts') IS NULL THEN
    RAISE EXCEPTION 'table "pgbench_accounts" does not exist'
      USING HINT = 'Run "pgbench -i" on this database first.';
  END IF;
END
$$;

-- bigint account ids: "pgbench -i" makes aid a bigint from scale 20000 on, and int4 = int8
-- comparisons still use the primary key index at smaller scales.
CREATE OR REPLACE FUNCTION pgwaitprof_tpcb(p_aid bigint, p_bid integer, p_tid integer,
                                           p_delta integer)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
  balance integer;
BEGIN
  UPDATE pgbench_accounts SET abalance = abalance + p_delta WHERE aid = p_aid;
  SELECT abalance INTO balance FROM pgbench_accounts WHERE aid = p_aid;
  UPDATE pgbench_tellers SET tbalance = tbalance + p_delta WHERE tid = p_tid;
  UPDATE pgbench_branches SET bbalance = bbalance + p_delta WHERE bid = p_bid;
  INSERT INTO pgbench_history (tid, bid, aid, delta, mtime)
    VALUES (p_tid, p_bid, p_aid, p_delta, CURRENT_TIMESTAMP);
  RETURN balance;
END
$$;
