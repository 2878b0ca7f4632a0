// The published schemas (docs/schema) against the codecs that write report.json and table.json
// (issue 28). The suite validates every file it writes against them (json_schema_outputs), so
// the codec cannot write what a schema does not allow; these tests add the other direction (a
// schema lists nothing that the codec, with every optional part present, does not write) and
// that each schema's version is the one the codec writes. tests/deploy/schema_versions.py makes
// a changed shape take a new version.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "exporters/render/matrix_table.h"
#include "exporters/render/report_render.h"
#include "model/run.h"
#include "model/wait_key.h"
#include "store/atomic_file.h"
#include "tests/exporters/render/matrix_table_fixture.h"

namespace pgwaitprof::exporters {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

json read_json(const fs::path& path) {
  std::ifstream file(path);
  return json::parse(file);
}

json schema(const std::string& name) {
  return read_json(fs::path(PGWAITPROF_SOURCE_DIR) / "docs" / "schema" / name);
}

// The places a schema declares (a property, a map's values "*", an array's items "[]") that no
// value in `values` fills, as paths such as "/timeline/[]/server_tps".
void unfilled(const json& root, const json& node, const std::vector<json>& values,
              const std::string& path, std::set<std::string>& missing) {
  if (node.contains("$ref")) {
    const std::string ref = node.at("$ref");  // "#/$defs/NAME"
    unfilled(root, root.at("$defs").at(ref.substr(ref.rfind('/') + 1)), values, path, missing);
    return;
  }
  for (const char* alternatives : {"anyOf", "oneOf"}) {
    if (node.contains(alternatives)) {
      for (const auto& alternative : node.at(alternatives)) {
        unfilled(root, alternative, values, path, missing);
      }
    }
  }
  if (node.contains("properties")) {
    for (const auto& [key, property] : node.at("properties").items()) {
      std::vector<json> found;
      for (const auto& value : values) {
        if (value.is_object() && value.contains(key)) found.push_back(value.at(key));
      }
      if (found.empty()) missing.insert(path + "/" + key);
      unfilled(root, property, found, path + "/" + key, missing);
    }
  }
  if (node.contains("additionalProperties") && node.at("additionalProperties").is_object()) {
    std::vector<json> found;
    for (const auto& value : values) {
      if (!value.is_object()) continue;
      for (const auto& [key, item] : value.items()) {
        if (!node.contains("properties") || !node.at("properties").contains(key)) {
          found.push_back(item);
        }
      }
    }
    if (found.empty()) missing.insert(path + "/*");
    unfilled(root, node.at("additionalProperties"), found, path + "/*", missing);
  }
  if (node.contains("items") && node.at("items").is_object()) {
    std::vector<json> found;
    for (const auto& value : values) {
      if (value.is_array()) found.insert(found.end(), value.begin(), value.end());
    }
    if (found.empty()) missing.insert(path + "/[]");
    unfilled(root, node.at("items"), found, path + "/[]", missing);
  }
}

std::set<std::string> unfilled_by(const json& schema_document, const json& document) {
  std::set<std::string> missing;
  unfilled(schema_document, schema_document, {document}, "", missing);
  return missing;
}

// Written the way pgwaitprof writes it, so that the suite's schema check validates it too.
void write_for_the_schema_check(const std::string& name, const std::string& text) {
  const fs::path dir =
      fs::temp_directory_path() / ("pgwaitprof-json-schema-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ASSERT_FALSE(store::write_file_atomically(dir / name, text));
  fs::remove_all(dir);
}

// A run with every optional part of report.json present: the fixture of a pgbench run with
// latency and kernel times, plus what only other kinds of runs have.
model::Run run_with_everything() {
  auto run = model::run_from_json(
      read_json(fs::path(PGWAITPROF_FIXTURES) / "report_v3_latency_kernel.json"));
  run.throughput_source = "pgbench";
  run.tags = {{"loadgen", "pgbench"}};
  // A run sampled on the server's host (run --sampler-host).
  run.environment.sampler_host = model::SamplerHost{
      "ssh://bench@db1", "db1", "Linux 6.1", "EPYC", 64, 1ULL << 38, "0.1.0", 0.25, 0.3};
  // The traced source's parts (schema 10), on a key of the profile's table and of a slice.
  model::TracedTime traced;
  traced.blocked_s = 0.2, traced.ended_blocked_s = 0.2, traced.runqueue_s = 0.01,
  traced.on_cpu_s = 0.001, traced.waits = 1;
  traced.min_s = traced.max_s = 0.2;
  traced.histogram[70] = 1;
  for (const auto& [key, count] : run.profile.counts()) {
    if (!model::is_idle(key)) {
      run.profile.add_traced(key, traced);
      run.timeline.front().profile.add_traced(key, traced);
      break;
    }
  }
  // The traced source's own counts (schema 11).
  run.sampler.trace =
      model::TraceCounts{1000, 400, 50, 2, 0, 0, 0, 9, 527.0, {0.5, 0.2, 0.51, 0.2}};
  run.work = model::WorkDone{2000, 65536, 100, base::Seconds(1.5)};
  run.checkpoint_after =
      model::CheckpointAfter{base::Seconds(30), base::Seconds(2), "", run.profile};
  run.run_to_run = model::RunToRun{3, 3, {{"tps", 1000, 20, 60}}};
  run.timeline.front().running = {20, 31};  // the memory source's running client backends
  run.query_ids[42] = 7;
  // A server of 17 or later describes its wait events (pg_wait_events).
  run.environment.wait_event_descriptions["Client | ClientRead"] =
      "Waiting to read data from the client";
  run.environment.pgwaitprof_version = "0.1.0 (6a6e3daf2c1f)";  // schema 14
  run.statements.push_back(
      {42, "SELECT $1", 7, {{"CPU", 7}}, uint64_t{100}, base::Milliseconds(0.25)});
  model::LockBlocker blocker;
  blocker.lock_type = "relation";
  blocker.object = "pgbench_accounts";
  blocker.observations = 3;
  run.lock_blockers.push_back(blocker);
  run.outages.push_back({base::Seconds(3), base::Seconds(1), 100, "server closed the connection"});
  model::LatencySummary latency;
  latency.count = 10;
  latency.min = latency.mean = latency.p50 = latency.p95 = latency.p99 = latency.max =
      base::Milliseconds(1.5);
  run.latency = latency;
  run.loadgen->qps = 20000;
  run.loadgen->aborted.push_back("client 3 aborted in command 4 (SQL) of script 0");
  run.loadgen->latency_at_percentile = base::Milliseconds(3.5);
  run.loadgen->latency_percentile = 95;
  // Long enough for a reliable tps estimate (batch means), which adds its 95 % interval.
  const auto slices = run.timeline;
  for (int copy = 1; copy < 20; ++copy) {
    for (auto slice : slices) {
      slice.start += base::Seconds(copy * slices.size());
      if (slice.loadgen) slice.loadgen->tps *= 1.0 + 0.01 * (copy % 3);
      run.timeline.push_back(slice);
    }
  }
  auto& slice = run.timeline.front();
  slice.server_tps = 1000;
  slice.server_tps_spread = true;
  slice.server_calls_per_s = 5000;
  slice.checkpoint_after = true;
  slice.latency = latency;
  slice.lock_blocker = "Lock | relation, blocked by pid 1";
  slice.loadgen->qps = 20000;
  slice.loadgen->latency_at_percentile = base::Milliseconds(3.5);
  slice.loadgen->latency_percentile = 95;
  slice.loadgen->lag = base::Milliseconds(0.5);
  model::CpuProfile cpu;
  cpu.hz = 99;
  cpu.cpus = 2;
  cpu.samples = cpu.lost = 1;
  cpu.groups["client backend"] = {1, {{"main;base_yyparse", 1}}, {{"base_yyparse", false, 1}}};
  cpu.intervals[0] = {1, {{"base_yyparse", false, 1}}};
  // A busy background process, and a stall whose CPU share rose.
  cpu.duration = base::Seconds(1);
  cpu.groups["walwriter"] = {
      50, {{"main;XLogBackgroundFlush", 50}}, {{"XLogBackgroundFlush", false, 50}}};
  run.cpu_profile = cpu;
  slice.profile.add({"client backend", "active", "CPU", "CPU"}, 100000);
  model::Stall stall;
  stall.start = slice.start;
  stall.duration = slice.duration;
  run.stalls.push_back(stall);
  return run;
}

TEST(JsonSchemaTest, ReportSchemaIsTheVersionTheCodecWrites) {
  EXPECT_EQ(schema("report.schema.json").at("properties").at("schema_version").at("const"),
            model::kReportSchemaVersion);
}

TEST(JsonSchemaTest, MatrixSchemaIsTheVersionTheCodecWrites) {
  EXPECT_EQ(schema("matrix.schema.json").at("properties").at("schema_version").at("const"),
            kMatrixSchemaVersion);
}

TEST(JsonSchemaTest, ReportSchemaDeclaresNothingTheCodecDoesNotWrite) {
  const std::string text = render_json(run_with_everything());
  write_for_the_schema_check("report.json", text);
  const auto missing = unfilled_by(schema("report.schema.json"), json::parse(text));
  EXPECT_TRUE(missing.empty()) << "declared in docs/schema/report.schema.json, never written: "
                               << json(missing).dump();
}

TEST(JsonSchemaTest, MatrixSchemaDeclaresNothingTheCodecDoesNotWrite) {
  // With what only a plan of builds (server_bin) has.
  auto table = test_support::fixture_table();
  table.builds.push_back({"master", "PostgreSQL 16.14", 16, "'--enable-debug'"});
  table.builds.push_back({"patched", "PostgreSQL 17.10", 17, ""});
  table.mixed_majors = {16, 17};
  table.cells.front().functions.push_back({"base_yyparse", "CPU", 0.2, 0.01, 0.1, 0.005});
  // And what only traced runs have.
  table.cells.front().durations.traced_runs = 2;
  table.cells.front().durations.events.push_back({.name = "LWLock | WALWrite",
                                                  .wait_class = "LWLock",
                                                  .runs = 2,
                                                  .waits_per_s = 2000,
                                                  .waits_per_s_error = 10,
                                                  .aas = 0.4,
                                                  .mean_s = 2e-4,
                                                  .p50_s = 1.8e-4,
                                                  .p99_s = 4e-3,
                                                  .p99_error = 1e-4,
                                                  .longest_s = 9e-3});
  const std::string text = render_matrix_json(table);
  write_for_the_schema_check("table.json", text);
  const auto missing = unfilled_by(schema("matrix.schema.json"), json::parse(text));
  EXPECT_TRUE(missing.empty()) << "declared in docs/schema/matrix.schema.json, never written: "
                               << json(missing).dump();
}

}  // namespace
}  // namespace pgwaitprof::exporters
