// The activity collector: the snapshot query of pg_stat_activity and its parsing.
#pragma once

#include <string>

#include <libpq-fe.h>

#include "daemon/model/sample.h"

namespace pgwaitprof::collectors {

// The snapshot query for a server of `server_version_num` (query_id exists from 14 on). It runs
// in autocommit: pg_stat_activity is cached for the length of a transaction.
std::string activity_query(int server_version_num);

// Fills snapshot.backends from a result of activity_query(); returns the hidden backends.
int parse_activity(const PGresult* result, model::Snapshot& snapshot);

}  // namespace pgwaitprof::collectors
