// A channel of framed messages over a pair of pipes (a child's stdin and stdout, or our own):
// each frame is a 4-byte big-endian length and that many bytes of payload, so a message needs
// no escaping and a reader never guesses where one ends. Used by both ends of the remote
// sampler's SSH channel (daemon/engine/remote_sampler.h, daemon/commands/remote_sample.h).
// Reads and writes wait on the descriptors through Asio, never by polling. Single-threaded:
// use from the io_context's thread only.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/async_event.h"

namespace pgwaitprof::base {

// Larger frames are refused: the channel is out of step or not ours (a shell's greeting).
inline constexpr uint32_t kMaxFrameBytes = 64U << 20;

// The frame of `payload`: its length (4 bytes, big-endian), then the payload.
std::string encode_frame(std::string_view payload);

// Cuts frames out of a byte stream as it arrives, in any pieces.
class FrameDecoder {
 public:
  void append(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole frame's payload, or nullopt until more bytes arrive. A length beyond
  // kMaxFrameBytes sets error() and yields nothing more.
  std::optional<std::string> next();
  // Why the stream cannot be read as frames, or "".
  const std::string& error() const { return error_; }
  // Bytes of an unfinished frame (the start of a shell's error message, when that is what came).
  const std::string& pending() const { return buffer_; }

 private:
  std::string buffer_;
  size_t consumed_ = 0;
  std::string error_;
};

class FramedChannel {
 public:
  // Takes ownership of both descriptors (the same one twice is not supported).
  FramedChannel(asio::any_io_executor executor, int read_fd, int write_fd);

  // The next frame, or nullopt at end of file, on an error or a malformed frame (error()).
  asio::awaitable<std::optional<std::string>> read();
  // Queues a frame; write_loop() sends it. False when the queue is past `limit` bytes (the
  // other end does not read) or the channel is closed: the frame is dropped.
  bool send(std::string_view payload, size_t limit = kMaxFrameBytes);
  // Sends what is queued until close() (after flushing what was queued before it) or a failed
  // write (error() says why).
  asio::awaitable<void> write_loop();
  // Writes one frame now, without the queue (while no write_loop() runs): false on an error.
  asio::awaitable<bool> write_now(std::string_view payload);
  // Ends write_loop() once the queue is sent; the read side stays open.
  void close_write();
  // Closes the write side at once (the other end reads end of file); the read side stays open.
  void close_output();
  // Cancels a pending read and closes both descriptors.
  void close();
  const std::string& error() const { return error_; }
  const FrameDecoder& decoder() const { return decoder_; }

 private:
  asio::posix::stream_descriptor in_;
  asio::posix::stream_descriptor out_;
  FrameDecoder decoder_;
  std::string queued_;
  AsyncPulse queued_pulse_;
  bool write_closed_ = false;
  std::string error_;
};

}  // namespace pgwaitprof::base
