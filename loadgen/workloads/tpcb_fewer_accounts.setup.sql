-- Setup for the tpcb-fewer-accounts workload: ten times the branches and tellers of the scale
-- (pgwaitprof_fa_branches, pgwaitprof_fa_tellers), over pgbench_accounts as it is, so a branch
-- has a tenth of the accounts: the "chop a zero off naccounts" trick of the pgbench vs. wait
-- events thread without recompiling pgbench. Safe to run again (rows added only when missing).
CREATE TABLE IF NOT EXISTS pgwaitprof_fa_branches (
  bid integer PRIMARY KEY,
  bbalance integer,
  filler character(88)
) WITH (fillfactor = 100);

CREATE TABLE IF NOT EXISTS pgwaitprof_fa_tellers (
  tid integer PRIMARY KEY,
  bid integer,
  tbalance integer,
  filler character(84)
) WITH (fillfactor = 100);

INSERT INTO pgwaitprof_fa_branches (bid, bbalance)
  SELECT bid, 0 FROM generate_series(1, 10 * (SELECT count(*) FROM pgbench_branches)) AS bid
  ON CONFLICT DO NOTHING;

INSERT INTO pgwaitprof_fa_tellers (tid, bid, tbalance)
  SELECT tid, (tid - 1) / 10 + 1, 0
  FROM generate_series(1, 100 * (SELECT count(*) FROM pgbench_branches)) AS tid
  ON CONFLICT DO NOTHING;
