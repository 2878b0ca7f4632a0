// The traced source's wait statistics: bucket bounds, percentiles kept inside the known extremes,
// and merging.
#include "model/traced_time.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pgwaitprof::model {
namespace {

TEST(TracedTime, BucketsAreFourPerPowerOfTwoFromOneMicrosecond) {
  EXPECT_EQ(kTracedBuckets, 106);
  EXPECT_DOUBLE_EQ(traced_bucket_lower_s(0), 0);
  EXPECT_DOUBLE_EQ(traced_bucket_upper_s(0), 1024e-9);
  EXPECT_DOUBLE_EQ(traced_bucket_lower_s(1), 1024e-9);
  EXPECT_DOUBLE_EQ(traced_bucket_upper_s(1), 1280e-9);
  EXPECT_DOUBLE_EQ(traced_bucket_lower_s(5), 2048e-9);
  for (int index = 1; index < kTracedBuckets - 1; ++index) {
    EXPECT_DOUBLE_EQ(traced_bucket_upper_s(index), traced_bucket_lower_s(index + 1)) << index;
  }
  EXPECT_TRUE(std::isinf(traced_bucket_upper_s(kTracedBuckets - 1)));
  EXPECT_GT(traced_bucket_lower_s(kTracedBuckets - 1), 60.0);
}

TEST(TracedTime, PercentilesStayInsideTheKnownShortestAndLongest) {
  TracedTime time;
  // Ten waits of 200.1 to 200.9 ms: all in the bucket [167.8, 201.3) ms.
  const int bucket = 1 + (27 - kTracedFirstPower) * kTracedPerPower + 1;
  ASSERT_LE(traced_bucket_lower_s(bucket), 0.2001);
  ASSERT_GT(traced_bucket_upper_s(bucket), 0.2009);
  time.histogram[bucket] = 10;
  time.waits = 10;
  time.blocked_s = 2.005;
  time.ended_blocked_s = 2.005;
  time.min_s = 0.2001;
  time.max_s = 0.2009;
  EXPECT_NEAR(time.percentile_s(0.5), 0.2005, 0.0005);
  EXPECT_NEAR(time.mean_s(), 0.2005, 1e-9);
  EXPECT_DOUBLE_EQ(time.longest_s(), 0.2009);
  // Without the extremes the bucket's middle: 8 % off, which is why they are kept.
  time.min_s = time.max_s = 0;
  EXPECT_NEAR(time.percentile_s(0.5), 0.1845, 0.001);
}

TEST(TracedTime, MergeAddsAndKeepsTheExtremes) {
  TracedTime a, b;
  a.waits = 2, a.blocked_s = 1, a.ended_blocked_s = 1, a.min_s = 0.2, a.max_s = 0.8,
  a.histogram[3] = 2;
  b.waits = 1, b.blocked_s = 0.1, b.ended_blocked_s = 0.1, b.min_s = 0.1, b.max_s = 0.1,
  b.histogram[3] = 1;
  b.runqueue_s = 0.5;
  a.merge(b);
  EXPECT_EQ(a.waits, 3u);
  EXPECT_DOUBLE_EQ(a.blocked_s, 1.1);
  EXPECT_DOUBLE_EQ(a.ended_blocked_s, 1.1);
  EXPECT_DOUBLE_EQ(a.runqueue_s, 0.5);
  EXPECT_DOUBLE_EQ(a.min_s, 0.1);
  EXPECT_DOUBLE_EQ(a.max_s, 0.8);
  EXPECT_EQ(a.histogram[3], 3u);
  EXPECT_DOUBLE_EQ(a.time_s(), 1.6);
  EXPECT_EQ(TracedTime{}.percentile_s(0.5), 0);
}

}  // namespace
}  // namespace pgwaitprof::model
