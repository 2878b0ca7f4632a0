// The remote sampler's messages as JSON.
#include "store/sample_wire.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "model/wait_key.h"

namespace pgwaitprof::store {
namespace {

using nlohmann::json;
using std::chrono::duration_cast;
using std::chrono::microseconds;

json kernel_groups(const std::map<std::string, model::KernelTime>& groups) {
  json out = json::object();
  for (const auto& [name, time] : groups) {
    out[name] = {time.on_cpu.count(), time.runqueue.count(), time.covered.count()};
  }
  return out;
}

std::map<std::string, model::KernelTime> kernel_groups_from(const json& groups) {
  std::map<std::string, model::KernelTime> out;
  for (const auto& [name, time] : groups.items()) {
    out[name] = {base::Seconds(time.at(0).get<double>()), base::Seconds(time.at(1).get<double>()),
                 base::Seconds(time.at(2).get<double>())};
  }
  return out;
}

json backend_json(const model::BackendSample& backend) {
  return json::array({backend.pid, backend.backend_type, backend.state, backend.wait_event_type,
                      backend.wait_event,
                      backend.query_id ? json(*backend.query_id) : json(nullptr), backend.datname,
                      backend.application_name, backend.backend_start.count(), backend.hidden,
                      std::string(backend.kernel_state == 0 ? 0 : 1, backend.kernel_state)});
}

model::BackendSample backend_from(const json& row) {
  model::BackendSample backend;
  backend.pid = row.at(0).get<int32_t>();
  backend.backend_type = row.at(1).get<std::string>();
  backend.state = row.at(2).get<std::string>();
  backend.wait_event_type = row.at(3).get<std::string>();
  backend.wait_event = row.at(4).get<std::string>();
  if (!row.at(5).is_null()) backend.query_id = row.at(5).get<int64_t>();
  backend.datname = row.at(6).get<std::string>();
  backend.application_name = row.at(7).get<std::string>();
  backend.backend_start = microseconds(row.at(8).get<int64_t>());
  backend.hidden = row.at(9).get<bool>();
  const auto state = row.at(10).get<std::string>();
  backend.kernel_state = state.empty() ? 0 : state.front();
  return backend;
}

json lock_wait_json(const model::LockWait& wait) {
  return {{"pid", wait.pid},
          {"lock_type", wait.lock_type},
          {"mode", wait.mode},
          {"object", wait.object},
          {"blocker_pid", wait.blocker_pid},
          {"blocker_backend_type", wait.blocker_backend_type},
          {"blocker_application", wait.blocker_application},
          {"blocker_state", wait.blocker_state},
          {"blocker_xact_age_s", wait.blocker_xact_age.count()},
          {"blocker_statement", wait.blocker_statement},
          {"blocker_blocked", wait.blocker_blocked},
          {"blocker_prepared", wait.blocker_prepared},
          {"blocker_owner", wait.blocker_owner}};
}

model::LockWait lock_wait_from(const json& j) {
  model::LockWait wait;
  wait.pid = j.value("pid", 0);
  wait.lock_type = j.value("lock_type", "");
  wait.mode = j.value("mode", "");
  wait.object = j.value("object", "");
  wait.blocker_pid = j.value("blocker_pid", 0);
  wait.blocker_backend_type = j.value("blocker_backend_type", "");
  wait.blocker_application = j.value("blocker_application", "");
  wait.blocker_state = j.value("blocker_state", "");
  wait.blocker_xact_age = base::Seconds(j.value("blocker_xact_age_s", -1.0));
  wait.blocker_statement = j.value("blocker_statement", "");
  wait.blocker_blocked = j.value("blocker_blocked", false);
  wait.blocker_prepared = j.value("blocker_prepared", "");
  wait.blocker_owner = j.value("blocker_owner", "");
  return wait;
}

}  // namespace

int64_t WireClock::to_wire(model::SystemClock::time_point at) const {
  return duration_cast<microseconds>(at.time_since_epoch()).count();
}

int64_t WireClock::to_wire(model::SteadyClock::time_point at) const {
  return to_wire(system + duration_cast<model::SystemClock::duration>(at - steady));
}

model::SystemClock::time_point WireClock::system_from_wire(int64_t micros) const {
  return model::SystemClock::time_point(
      duration_cast<model::SystemClock::duration>(microseconds(micros) - offset));
}

model::SteadyClock::time_point WireClock::steady_from_wire(int64_t micros) const {
  return steady + duration_cast<model::SteadyClock::duration>(system_from_wire(micros) - system);
}

std::string hello_message(const Hello& hello) {
  return json{{"type", "hello"}, {"protocol", hello.protocol}, {"version", hello.version}}.dump();
}

std::optional<Hello> parse_hello(const std::string& payload) {
  auto message = parse_message(payload);
  if (!message || message->first != "hello") return std::nullopt;
  const auto& body = message->second;
  if (!body.contains("protocol") || !body.at("protocol").is_number_integer()) return std::nullopt;
  return Hello{body.at("protocol").get<int>(), body.value("version", "")};
}

std::string ping_message(int64_t sent_us) {
  return json{{"type", "ping"}, {"sent_us", sent_us}}.dump();
}

std::string pong_message(int64_t sent_us, int64_t at_us) {
  return json{{"type", "pong"}, {"sent_us", sent_us}, {"at_us", at_us}}.dump();
}

std::string start_message(const collectors::SamplerOptions& options, const std::string& password) {
  // The password this host would use reaches the remote sampler's environment: libpq there
  // reads PGPASSWORD where the connection string has none.
  // Auto on the sampler host reads memory, not the traced source: the traced source's statement
  // times, counts and check do not cross the channel yet (`--source trace` names it all the
  // same).
  return json{{"type", "start"},
              {"pgpassword", password},
              {"name", options.name},
              {"dsn", options.conninfo},
              {"hz", options.hz},
              {"trace_hz", options.trace_hz},
              {"auto_traces", false},
              {"source", std::string(model::to_string(options.source))},
              {"wait_sampling_poll_ms", options.wait_sampling_poll.count()},
              {"connect_timeout_ms", options.connect_timeout.count()},
              {"local", static_cast<int>(options.local)}}
      .dump();
}

std::string cpu_start_message(int hz) { return json{{"type", "cpu_start"}, {"hz", hz}}.dump(); }

int cpu_start_hz(const json& message) { return message.value("hz", 0); }

std::string cpu_stop_message() { return json{{"type", "cpu_stop"}}.dump(); }

std::string cpu_profile_message(const std::string& refusal) {
  return json{{"type", "cpu_profile"}, {"refusal", refusal}}.dump();
}

std::string cpu_profile_refusal(const json& message) { return message.value("refusal", ""); }

collectors::SamplerOptions parse_start(const json& message) {
  collectors::SamplerOptions options;
  options.name = message.value("name", "remote");
  options.conninfo = message.value("dsn", "");
  if (const auto password = message.value("pgpassword", ""); !password.empty()) {
    ::setenv("PGPASSWORD", password.c_str(), 1);
  }
  options.hz = message.value("hz", 100.0);
  options.trace_hz = message.value("trace_hz", 0.0);
  options.auto_traces = message.value("auto_traces", false);
  options.source = model::parse_sampler_source(message.value("source", "auto"))
                       .value_or(model::SamplerSource::kAuto);
  options.wait_sampling_poll = std::chrono::milliseconds(message.value("wait_sampling_poll_ms", 0));
  options.connect_timeout = std::chrono::milliseconds(message.value("connect_timeout_ms", 5000));
  options.local = static_cast<config::LocalMode>(message.value("local", 0));
  return options;
}

std::string host_message(const model::Environment& host) {
  return json{{"type", "host"},
              {"hostname", host.hostname},
              {"kernel", host.kernel},
              {"cpu_model", host.cpu_model},
              {"cpu_count", host.cpu_count},
              {"memory_bytes", host.memory_bytes}}
      .dump();
}

void read_host(const json& message, model::SamplerHost& host) {
  host.hostname = message.value("hostname", "");
  host.kernel = message.value("kernel", "");
  host.cpu_model = message.value("cpu_model", "");
  host.cpu_count = message.value("cpu_count", 0);
  host.memory_bytes = message.value("memory_bytes", uint64_t{0});
}

std::string error_message(const std::string& message) {
  return json{{"type", "error"}, {"message", message}}.dump();
}

std::optional<std::pair<std::string, json>> parse_message(const std::string& payload) {
  auto message = json::parse(payload, nullptr, false);
  if (message.is_discarded() || !message.is_object() || !message.contains("type") ||
      !message.at("type").is_string()) {
    return std::nullopt;
  }
  auto type = message.at("type").get<std::string>();
  return std::pair{std::move(type), std::move(message)};
}

void WireSink::on_snapshot(const model::Snapshot& snapshot) {
  json backends = json::array();
  for (const auto& backend : snapshot.backends) backends.push_back(backend_json(backend));
  send_(json{{"type", "snapshot"},
             {"taken_at", clock_.to_wire(snapshot.taken_at)},
             {"taken_at_steady", clock_.to_wire(snapshot.taken_at_steady)},
             {"query_ns", snapshot.query_duration.count()},
             {"hidden", snapshot.hidden_backends},
             {"all_states", snapshot.all_states},
             {"backends", std::move(backends)}}
            .dump());
}

void WireSink::on_profile_delta(const model::Profile& delta,
                                model::SystemClock::time_point read_at) {
  json profile;
  model::to_json(profile, delta);
  send_(json{{"type", "profile_delta"}, {"read_at", clock_.to_wire(read_at)}, {"profile", profile}}
            .dump());
}

void WireSink::on_missed_ticks(uint64_t ticks) {
  send_(json{{"type", "missed"}, {"ticks", ticks}}.dump());
}

void WireSink::on_source(model::SamplerSource source, std::string_view reason) {
  send_(json{{"type", "source"},
             {"source", std::string(model::to_string(source))},
             {"reason", std::string(reason)}}
            .dump());
}

void WireSink::on_connection_state(bool up, model::SteadyClock::time_point at,
                                   std::string_view reason) {
  send_(json{{"type", "connection"},
             {"up", up},
             {"at", clock_.to_wire(at)},
             {"reason", std::string(reason)}}
            .dump());
}

void WireSink::on_collector_status(std::string_view collector, base::Seconds duration,
                                   bool success) {
  send_(json{{"type", "collector"},
             {"name", std::string(collector)},
             {"duration_s", duration.count()},
             {"success", success}}
            .dump());
}

void WireSink::on_kernel_times(const model::KernelTimes& times) {
  send_(json{{"type", "kernel"},
             {"from", clock_.to_wire(times.from)},
             {"to", clock_.to_wire(times.to)},
             {"by_group", kernel_groups(times.by_group)},
             {"by_backend_type", kernel_groups(times.by_backend_type)}}
            .dump());
}

void WireSink::on_lock_waits(const model::LockLookup& lookup) {
  json waits = json::array();
  for (const auto& wait : lookup.waits) waits.push_back(lock_wait_json(wait));
  send_(json{{"type", "locks"}, {"at", clock_.to_wire(lookup.at)}, {"waits", std::move(waits)}}
            .dump());
}

void WireSink::on_statement_texts(const std::map<int64_t, std::string>& texts) {
  json entries = json::array();
  for (const auto& [query_id, text] : texts) entries.push_back({query_id, text});
  send_(json{{"type", "texts"}, {"texts", std::move(entries)}}.dump());
}

std::string cpu_message(const model::CpuSampleBatch& batch,
                        model::SteadyClock::time_point drained_at, const WireClock& clock) {
  // A batch repeats the same frames (a few dozen functions) in every stack: each name crosses
  // once.
  json names = json::array();
  std::map<std::string_view, size_t> index_of;
  auto index = [&](std::string_view name) {
    auto [found, added] = index_of.try_emplace(name, names.size());
    if (added) names.push_back(name);
    return found->second;
  };
  json samples = json::array();
  for (const auto& sample : batch.samples) {
    json frames = json::array();
    for (const auto& frame : sample.frames) frames.push_back(index(frame));
    samples.push_back({index(sample.backend_type), clock.to_wire(sample.at), std::move(frames)});
  }
  return json{{"type", "cpu"},
              {"drained_at", clock.to_wire(drained_at)},
              {"hz", batch.hz},
              {"cpus", batch.cpus},
              {"lost", batch.lost},
              {"notes", batch.notes},
              {"names", std::move(names)},
              {"samples", std::move(samples)}}
      .dump();
}

model::SteadyClock::time_point cpu_batch_drained_at(const json& message, const WireClock& clock) {
  return clock.steady_from_wire(message.at("drained_at").get<int64_t>());
}

model::CpuSampleBatch cpu_batch_from(const json& message, const WireClock& clock) {
  model::CpuSampleBatch batch;
  batch.hz = message.value("hz", 0);
  batch.cpus = message.value("cpus", 0);
  batch.lost = message.value("lost", uint64_t{0});
  batch.notes = message.value("notes", std::vector<std::string>{});
  const auto& names = message.at("names");
  for (const auto& row : message.at("samples")) {
    model::CpuSample sample;
    sample.backend_type = names.at(row.at(0).get<size_t>()).get<std::string>();
    sample.at = clock.steady_from_wire(row.at(1).get<int64_t>());
    for (const auto& frame : row.at(2)) {
      sample.frames.push_back(names.at(frame.get<size_t>()).get<std::string>());
    }
    batch.samples.push_back(std::move(sample));
  }
  return batch;
}

bool deliver_message(const std::string& type, const json& message, const WireClock& clock,
                     model::SampleSink& sink) {
  if (type == "snapshot") {
    model::Snapshot snapshot;
    snapshot.taken_at = clock.system_from_wire(message.at("taken_at").get<int64_t>());
    snapshot.taken_at_steady = clock.steady_from_wire(message.at("taken_at_steady").get<int64_t>());
    snapshot.query_duration = std::chrono::nanoseconds(message.value("query_ns", int64_t{0}));
    snapshot.hidden_backends = message.value("hidden", 0);
    snapshot.all_states = message.value("all_states", false);
    for (const auto& row : message.at("backends")) snapshot.backends.push_back(backend_from(row));
    model::assign_keys(snapshot);
    sink.on_snapshot(snapshot);
  } else if (type == "profile_delta") {
    sink.on_profile_delta(model::profile_from_json(message.at("profile")),
                          clock.system_from_wire(message.at("read_at").get<int64_t>()));
  } else if (type == "missed") {
    sink.on_missed_ticks(message.value("ticks", uint64_t{0}));
  } else if (type == "source") {
    sink.on_source(model::parse_sampler_source(message.value("source", "activity"))
                       .value_or(model::SamplerSource::kActivity),
                   message.value("reason", ""));
  } else if (type == "connection") {
    sink.on_connection_state(message.value("up", false),
                             clock.steady_from_wire(message.at("at").get<int64_t>()),
                             message.value("reason", ""));
  } else if (type == "collector") {
    sink.on_collector_status(message.value("name", ""),
                             base::Seconds(message.value("duration_s", 0.0)),
                             message.value("success", false));
  } else if (type == "kernel") {
    model::KernelTimes times;
    times.from = clock.steady_from_wire(message.at("from").get<int64_t>());
    times.to = clock.steady_from_wire(message.at("to").get<int64_t>());
    times.by_group = kernel_groups_from(message.at("by_group"));
    times.by_backend_type = kernel_groups_from(message.at("by_backend_type"));
    sink.on_kernel_times(times);
  } else if (type == "locks") {
    model::LockLookup lookup;
    lookup.at = clock.steady_from_wire(message.at("at").get<int64_t>());
    for (const auto& wait : message.at("waits")) lookup.waits.push_back(lock_wait_from(wait));
    sink.on_lock_waits(lookup);
  } else if (type == "texts") {
    std::map<int64_t, std::string> texts;
    for (const auto& entry : message.at("texts")) {
      texts[entry.at(0).get<int64_t>()] = entry.at(1).get<std::string>();
    }
    sink.on_statement_texts(texts);
  } else {
    return false;
  }
  return true;
}

}  // namespace pgwaitprof::store
