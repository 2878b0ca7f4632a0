// Standard output as every command writes it: std::cout onto file descriptor 1 with write(2),
// so that a failed write is known, with its errno, instead of being lost in a stream's state.
// SIGPIPE is ignored (cli.cc): a reader that went away (`pgwaitprof run | head`) gives EPIPE,
// which ends the output and nothing else, so a run still finishes and writes its report. Any
// other failure (a full disk, `> /dev/full`) is an error of the command: its exit code becomes
// 1 and one line on stderr says why.
#pragma once

#include <array>
#include <streambuf>

namespace pgwaitprof::commands {

class StandardOutput : public std::streambuf {
 public:
  StandardOutput();
  // Sends what is buffered; afterwards error() is final.
  void flush();
  // The errno of the first failed write, 0 when none failed.
  int error() const { return error_; }

 protected:
  int_type overflow(int_type character) override;
  int sync() override;

 private:
  void write_all(const char* data, size_t size);
  std::array<char, 8192> buffer_{};
  int error_ = 0;
};

// Installs one StandardOutput under std::cout (for the process's lifetime).
void capture_standard_output();

// The command's exit code once its output is flushed: `exit_code`, or 1 when it was 0 and
// standard output failed for another reason than a reader that went away.
int finish_standard_output(int exit_code);

}  // namespace pgwaitprof::commands
