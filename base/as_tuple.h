// Awaiting an Asio operation without exceptions: `co_await op(..., base::kAsTuple)` gives the
// error code and the results as a tuple.
#pragma once

#include <asio/experimental/as_tuple.hpp>
#include <asio/use_awaitable.hpp>

namespace pgwaitprof::base {

inline constexpr auto kAsTuple = asio::experimental::as_tuple(asio::use_awaitable);

}  // namespace pgwaitprof::base
