// The daemon's upload of finished runs to the results database: each run is queued in the data
// directory first (results_db.h), then pushed on a worker thread (libpq blocks; the daemon's
// I/O thread never does). When the database cannot be reached the queue is pushed again after a
// back-off (5 s, doubling to 5 min) on an Asio timer; a run is never lost and never failed.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/steady_timer.hpp>
#include <asio/thread_pool.hpp>
#include <chrono>
#include <filesystem>
#include <string>

#include "store/results_db.h"

namespace pgwaitprof::store {

class ResultsUploader {
 public:
  // `report_json` renders each run's report column (store::push_pending).
  ResultsUploader(asio::any_io_executor executor, std::filesystem::path data_dir, std::string dsn,
                  RenderRun report_json);
  ResultsUploader(const ResultsUploader&) = delete;
  ResultsUploader& operator=(const ResultsUploader&) = delete;
  ~ResultsUploader();  // stop(), then waits for the push in flight

  // Queues the run directory and pushes the queue (now, or after the push in flight).
  void add(const std::filesystem::path& run_dir);
  // Pushes what an earlier process left queued.
  void push();
  // No further pushes. The one in flight is not waited for: a daemon that is stopping exits
  // within a second, and an upload cut short is rolled back by the server and stays queued
  // (a connection attempt alone may take the 5 s connect timeout).
  void stop();

 private:
  void on_pushed(const PushResult& result);

  asio::any_io_executor executor_;
  std::filesystem::path data_dir_;
  std::string dsn_;
  RenderRun report_json_;
  asio::thread_pool worker_{1};
  asio::steady_timer retry_;
  std::chrono::seconds backoff_{5};
  bool in_flight_ = false;
  bool again_ = false;  // a run was added while a push was in flight
  bool stopped_ = false;
};

}  // namespace pgwaitprof::store
