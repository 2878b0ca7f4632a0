// The daemon's data directory is its own: created 0700, an existing one that others may write to
// or enter is tightened to 0700 (and says what it was), 0700 and 0750 are kept, and one that
// belongs to another user is refused.
#include "store/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace pgwaitprof::store {
namespace {

namespace fs = std::filesystem;

class DataDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("pgwaitprof-data-dir-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  static mode_t mode_of(const fs::path& path) {
    struct stat status {};
    ::stat(path.c_str(), &status);
    return status.st_mode & 07777;
  }
  // A directory with exactly `mode`, whatever the umask.
  fs::path existing(const std::string& name, mode_t mode) const {
    const auto path = root_ / name;
    fs::create_directory(path);
    ::chmod(path.c_str(), mode);
    return path;
  }

  fs::path root_;
};

TEST_F(DataDirectoryTest, AMissingOneIsCreatedOwnerOnly) {
  const auto path = root_ / "a" / "data";
  const auto claimed = store::claim_data_directory(path);
  ASSERT_TRUE(claimed) << claimed.error().message;
  EXPECT_FALSE(*claimed);
  EXPECT_EQ(mode_of(path), 0700);
}

TEST_F(DataDirectoryTest, OneOthersCanWriteToOrEnterIsTightened) {
  for (const mode_t loose : {0777, 0770, 0755, 0701, 0711}) {
    const auto path = existing("loose", loose);
    const auto claimed = store::claim_data_directory(path);
    ASSERT_TRUE(claimed) << claimed.error().message;
    ASSERT_TRUE(*claimed) << std::oct << loose;
    EXPECT_EQ(**claimed, loose);
    EXPECT_EQ(mode_of(path), 0700) << std::oct << loose;
    fs::remove(path);
  }
}

TEST_F(DataDirectoryTest, OwnerOnlyAndGroupReadableOnesAreKept) {
  for (const mode_t kept : {0700, 0750, 0710}) {
    const auto path = existing("kept", kept);
    const auto claimed = store::claim_data_directory(path);
    ASSERT_TRUE(claimed) << claimed.error().message;
    EXPECT_FALSE(*claimed) << std::oct << kept;
    EXPECT_EQ(mode_of(path), kept);
    fs::remove(path);
  }
}

TEST_F(DataDirectoryTest, AnotherUsersOneIsRefusedAndLeftAlone) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  const auto path = existing("theirs", 0777);
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  const auto claimed = store::claim_data_directory(path);
  ASSERT_FALSE(claimed);
  EXPECT_EQ(claimed.error().message, "data directory \"" + path.string() +
                                         "\" is owned by uid 65534, not by this user (uid 0): "
                                         "run as its owner");
  EXPECT_EQ(mode_of(path), 0777);
}

TEST_F(DataDirectoryTest, AFileIsNotADataDirectory) {
  const auto path = root_ / "file";
  ::close(::creat(path.c_str(), 0600));
  const auto claimed = store::claim_data_directory(path);
  ASSERT_FALSE(claimed);
  EXPECT_EQ(claimed.error().message,
            "could not open data directory \"" + path.string() + "\": Not a directory");
}

}  // namespace
}  // namespace pgwaitprof::store
