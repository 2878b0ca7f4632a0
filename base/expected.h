// Errors as values inside the I/O loop (STYLE.md rule 4): an Error is one line in PostgreSQL
// message style; Expected<T> holds a T or the Error that replaced it.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace pgwaitprof::base {

struct Error {
  std::string message;
};

// No error, or the one that happened.
using Status = std::optional<Error>;

template <typename T>
class [[nodiscard]] Expected {
 public:
  // Asio's co_spawn needs a default value for a coroutine that threw.
  Expected() : error_(Error{"no result"}) {}
  Expected(T value) : value_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Expected(Error error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  const Error& error() const { return *error_; }

 private:
  std::optional<T> value_;
  std::optional<Error> error_;
};

}  // namespace pgwaitprof::base
