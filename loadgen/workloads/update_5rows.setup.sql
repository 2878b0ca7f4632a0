-- Setup for the update-5rows workload: it only needs pgbench's tables, so this checks they
-- exist and says what to do when they do not. Safe to run any number of times.
DO $$
BEGIN
  IF to_regclass('pgbench_accounts') IS NULL THEN
    RAISE EXCEPTION 'table "pgbench_accounts" does not exist'
      USING HINT = 'Run "pgbench -i" on this database first.';
  END IF;
END
$$;
