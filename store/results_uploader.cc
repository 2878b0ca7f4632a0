// The daemon's results uploader.
#include "store/results_uploader.h"

#include <asio/post.hpp>

#include "base/logging.h"

namespace pgwaitprof::store {
namespace {

auto results_uploader_log() { return base::component_logger("results"); }

constexpr std::chrono::seconds kFirstBackoff{5};
constexpr std::chrono::seconds kMaxBackoff{300};

}  // namespace

ResultsUploader::ResultsUploader(asio::any_io_executor executor, std::filesystem::path data_dir,
                                 std::string dsn, RenderRun report_json)
    : executor_(std::move(executor)),
      data_dir_(std::move(data_dir)),
      dsn_(std::move(dsn)),
      report_json_(report_json),
      retry_(executor_) {}

ResultsUploader::~ResultsUploader() {
  stop();
  worker_.join();
}

void ResultsUploader::add(const std::filesystem::path& run_dir) {
  if (auto failed = queue_upload(data_dir_, run_dir)) {
    results_uploader_log()->error("could not queue run for upload: {}", failed->message);
    return;
  }
  push();
}

void ResultsUploader::push() {
  if (stopped_) return;
  if (in_flight_) {
    again_ = true;
    return;
  }
  in_flight_ = true;
  retry_.cancel();
  asio::post(worker_, [this] {
    auto result = push_pending(data_dir_, dsn_, report_json_);
    asio::post(executor_, [this, result = std::move(result)] { on_pushed(result); });
  });
}

void ResultsUploader::on_pushed(const PushResult& result) {
  in_flight_ = false;
  if (stopped_) return;
  if (result.uploaded > 0)
    results_uploader_log()->info("uploaded runs={} pending={}", result.uploaded, result.pending);
  for (const auto& refused : result.refused) results_uploader_log()->error("{}", refused);
  if (result.error.empty() || result.pending == 0) {
    backoff_ = kFirstBackoff;
    if (std::exchange(again_, false)) push();
    return;
  }
  again_ = false;
  results_uploader_log()->warn(
      "results database upload failed pending={} retry_in={}s error=\"{}\"", result.pending,
      backoff_.count(), result.error);
  retry_.expires_after(backoff_);
  backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  retry_.async_wait([this](const std::error_code& error) {
    if (!error) push();
  });
}

void ResultsUploader::stop() {
  if (stopped_) return;
  stopped_ = true;
  retry_.cancel();
}

}  // namespace pgwaitprof::store
