// Frames of the remote sampler's channel: cut out of a stream in any pieces, and a length that
// is not ours refused.
#include "base/frame_channel.h"

#include <gtest/gtest.h>

namespace pgwaitprof::base {
namespace {

TEST(FrameDecoder, FramesArriveInAnyPieces) {
  const std::string stream = encode_frame("hello") + encode_frame("") + encode_frame("world!");
  FrameDecoder decoder;
  std::vector<std::string> frames;
  for (const char byte : stream) {
    decoder.append(std::string_view(&byte, 1));
    while (auto frame = decoder.next()) frames.push_back(*frame);
  }
  EXPECT_EQ(frames, (std::vector<std::string>{"hello", "", "world!"}));
  EXPECT_TRUE(decoder.error().empty());
}

TEST(FrameDecoder, LengthIsBigEndian) {
  const std::string frame = encode_frame(std::string(258, 'x'));
  ASSERT_EQ(frame.size(), 262U);
  EXPECT_EQ(frame.substr(0, 4), std::string("\0\0\x01\x02", 4));
}

TEST(FrameDecoder, TextThatIsNotAFrameIsRefused) {
  // A login script's greeting: "Welc" read as a length of 1.4 GB.
  FrameDecoder decoder;
  decoder.append("Welcome to the server\n");
  EXPECT_FALSE(decoder.next());
  EXPECT_FALSE(decoder.error().empty());
}

}  // namespace
}  // namespace pgwaitprof::base
