// The server's description, read once per run: version, non-default settings, data checksums.
#pragma once

#include <asio/awaitable.hpp>
#include <optional>

#include "collectors/pg_session.h"
#include "model/run.h"

namespace pgwaitprof::collectors {

asio::awaitable<std::optional<PgError>> describe_server(PgSession& session,
                                                        model::Environment& environment);

// PostgreSQL 17+: the server's own description (pg_wait_events) of every wait event in `profile`,
// into environment.wait_event_descriptions. Older servers have no such view: nothing to do.
asio::awaitable<std::optional<PgError>> describe_wait_events(PgSession& session,
                                                             const model::Profile& profile,
                                                             model::Environment& environment);

}  // namespace pgwaitprof::collectors
