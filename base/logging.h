// One named spdlog logger per component, all to stderr with the same pattern and level.
// Messages: a short lowercase text, then key=value fields (STYLE.md).
#pragma once

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <vector>

namespace pgwaitprof::base {

inline std::shared_ptr<spdlog::logger> component_logger(const std::string& component) {
  if (auto existing = spdlog::get(component)) return existing;
  auto logger = spdlog::stderr_color_mt(component);
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ [%n] %v");
  logger->set_level(spdlog::get_level());
  return logger;
}

// The level names --log-level and log_level accept: the one list the CLI and the config read.
inline const std::vector<std::string>& log_level_names() {
  static const std::vector<std::string> names = {"trace", "debug", "info", "warn", "error", "off"};
  return names;
}

// Applies a level name (trace, debug, info, warn, error, off) to every logger, present and future.
inline void set_log_level(const std::string& level) {
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& logger) {
    logger->set_level(spdlog::level::from_str(level));
  });
}

}  // namespace pgwaitprof::base
