// Frames on pipes: the codec, the reader and the queued writer.
#include "base/frame_channel.h"

#include <asio/experimental/as_tuple.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>

#include "base/as_tuple.h"

namespace pgwaitprof::base {

std::string encode_frame(std::string_view payload) {
  const auto length = static_cast<uint32_t>(payload.size());
  std::string frame;
  frame.reserve(4 + payload.size());
  for (int shift = 24; shift >= 0; shift -= 8) {
    frame.push_back(static_cast<char>((length >> shift) & 0xff));
  }
  frame.append(payload);
  return frame;
}

std::optional<std::string> FrameDecoder::next() {
  if (!error_.empty()) return std::nullopt;
  const size_t available = buffer_.size() - consumed_;
  if (available < 4) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
    return std::nullopt;
  }
  uint32_t length = 0;
  for (size_t index = 0; index < 4; ++index) {
    length = (length << 8) | static_cast<unsigned char>(buffer_[consumed_ + index]);
  }
  if (length > kMaxFrameBytes) {
    error_ = "frame of " + std::to_string(length) + " bytes is longer than the limit";
    return std::nullopt;
  }
  if (available < 4 + static_cast<size_t>(length)) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
    return std::nullopt;
  }
  std::string payload = buffer_.substr(consumed_ + 4, length);
  consumed_ += 4 + length;
  return payload;
}

FramedChannel::FramedChannel(asio::any_io_executor executor, int read_fd, int write_fd)
    : in_(executor, read_fd), out_(executor, write_fd), queued_pulse_(executor) {}

asio::awaitable<std::optional<std::string>> FramedChannel::read() {
  char buffer[65536];
  for (;;) {
    if (auto frame = decoder_.next()) co_return frame;
    if (!decoder_.error().empty()) {
      error_ = decoder_.error();
      co_return std::nullopt;
    }
    if (!in_.is_open()) co_return std::nullopt;
    auto [error, got] = co_await in_.async_read_some(asio::buffer(buffer), kAsTuple);
    decoder_.append(std::string_view(buffer, got));
    if (error) {
      if (error != asio::error::eof && error_.empty()) error_ = error.message();
      // What came before the end is still read.
      if (auto frame = decoder_.next()) co_return frame;
      co_return std::nullopt;
    }
  }
}

bool FramedChannel::send(std::string_view payload, size_t limit) {
  if (write_closed_ || !out_.is_open() || queued_.size() > limit) return false;
  queued_ += encode_frame(payload);
  queued_pulse_.notify();
  return true;
}

asio::awaitable<void> FramedChannel::write_loop() {
  std::string sending;
  while (out_.is_open()) {
    if (queued_.empty()) {
      if (write_closed_) break;
      co_await queued_pulse_.wait();
      continue;
    }
    sending.swap(queued_);
    queued_.clear();
    auto [error, written] = co_await asio::async_write(out_, asio::buffer(sending), kAsTuple);
    sending.clear();
    if (error) {
      if (error_.empty()) error_ = error.message();
      break;
    }
  }
  if (out_.is_open()) out_.close();
}

asio::awaitable<bool> FramedChannel::write_now(std::string_view payload) {
  if (!out_.is_open()) co_return false;
  const std::string frame = encode_frame(payload);
  auto [error, written] = co_await asio::async_write(out_, asio::buffer(frame), kAsTuple);
  if (error && error_.empty()) error_ = error.message();
  co_return !error;
}

void FramedChannel::close_output() {
  write_closed_ = true;
  queued_.clear();
  queued_pulse_.notify();
  asio::error_code ignored;
  if (out_.is_open()) out_.close(ignored);
}

void FramedChannel::close_write() {
  write_closed_ = true;
  queued_pulse_.notify();
}

void FramedChannel::close() {
  write_closed_ = true;
  queued_.clear();
  queued_pulse_.notify();
  asio::error_code ignored;
  if (in_.is_open()) in_.close(ignored);
  if (out_.is_open()) out_.cancel(ignored);
}

}  // namespace pgwaitprof::base
