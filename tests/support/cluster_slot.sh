# shellcheck shell=bash
# Sourced by the shell tests that use a scratch cluster: the PG* variables of the cluster ctest
# gave the test (tests/support/cluster_slot.cc says how), else the environment as it is.
if [[ -n ${CTEST_RESOURCE_GROUP_0_CLUSTER:-} && -n ${PGWAITPROF_TEST_CLUSTERS:-} ]]; then
  cluster_slot=${CTEST_RESOURCE_GROUP_0_CLUSTER#id:}
  cluster_slot=${cluster_slot%%,*}
  while IFS= read -r cluster_variable; do
    export "${cluster_variable?}"
  done <"$PGWAITPROF_TEST_CLUSTERS/$cluster_slot.env"
  unset cluster_slot cluster_variable
fi
