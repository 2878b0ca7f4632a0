// Standard output with its write errors kept.
#include "daemon/commands/standard_output.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

namespace pgwaitprof::commands {

StandardOutput::StandardOutput() { setp(buffer_.data(), buffer_.data() + buffer_.size()); }

void StandardOutput::write_all(const char* data, size_t size) {
  // After the first failure nothing more is written: an EPIPE reader is gone, and a full disk
  // would only fail again.
  while (size > 0 && error_ == 0) {
    const ssize_t written = ::write(STDOUT_FILENO, data, size);
    if (written < 0) {
      if (errno != EINTR) error_ = errno;
      continue;
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
}

void StandardOutput::flush() {
  write_all(pbase(), static_cast<size_t>(pptr() - pbase()));
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

StandardOutput::int_type StandardOutput::overflow(int_type character) {
  flush();
  if (!traits_type::eq_int_type(character, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(character);
    pbump(1);
  }
  // Never a failure to the stream: a command's output going nowhere must not change what the
  // command does (error() tells at the end).
  return traits_type::not_eof(character);
}

int StandardOutput::sync() {
  flush();
  return 0;
}

namespace {
StandardOutput& standard_output() {
  static StandardOutput output;
  return output;
}
}  // namespace

void capture_standard_output() { std::cout.rdbuf(&standard_output()); }

int finish_standard_output(int exit_code) {
  auto& output = standard_output();
  if (std::cout.rdbuf() != &output) return exit_code;
  output.flush();
  if (output.error() == 0 || output.error() == EPIPE) return exit_code;
  std::cerr << "pgwaitprof: could not write to standard output: " << std::strerror(output.error())
            << '\n';
  return exit_code == 0 ? 1 : exit_code;
}

}  // namespace pgwaitprof::commands
