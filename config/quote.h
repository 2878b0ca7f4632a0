// How a value a user gave is echoed in a message: one line, at most 80 characters, control
// characters written out, in double quotes. Configuration errors and rejected numbers use it, so
// what() stays one line whatever was typed.
#pragma once

#include <string>
#include <string_view>

namespace pgwaitprof::config {

std::string quote(std::string_view text);

}  // namespace pgwaitprof::config
