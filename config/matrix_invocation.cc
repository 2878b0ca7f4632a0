// A matrix's invocation, saved and checked on resume.
#include "config/matrix_invocation.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "config/quote.h"

namespace pgwaitprof::config {
namespace {

// The figures of a plan that the options change: equal figures, equal cells.
bool same_cells(const MatrixPlan& left, const MatrixPlan& right) {
  return left.duration == right.duration && left.repeats == right.repeats &&
         left.scale == right.scale && left.clients == right.clients &&
         left.max_clients == right.max_clients && left.warmup == right.warmup;
}

// The option of `given` that changes `plan`, as the command line spells it, and why.
std::string contradiction(const MatrixPlan& plan, const PlanOverrides& given) {
  if (given.duration_s && std::chrono::seconds(*given.duration_s) != plan.duration) {
    return fmt::format("--duration {} contradicts the matrix's {} s runs", *given.duration_s,
                       plan.duration.count());
  }
  if (given.repeats && *given.repeats != plan.repeats) {
    return fmt::format("--repeats {} contradicts the matrix's {} repeat(s)", *given.repeats,
                       plan.repeats);
  }
  if (given.scale && *given.scale != plan.scale) {
    return fmt::format("--scale {} contradicts the matrix's scale {}", *given.scale, plan.scale);
  }
  return "--quick contradicts the matrix, which was not started with it";
}

std::optional<int> read_number(const YAML::Node& node) {
  if (!node || node.IsNull()) return std::nullopt;
  return node.as<int>();
}

}  // namespace

std::string invocation_yaml(const MatrixInvocation& invocation) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  auto number = [&out](const char* key, const std::optional<int>& value) {
    out << YAML::Key << key << YAML::Value;
    if (value) {
      out << *value;
    } else {
      out << YAML::Null;
    }
  };
  number("duration", invocation.overrides.duration_s);
  number("repeats", invocation.overrides.repeats);
  number("scale", invocation.overrides.scale);
  out << YAML::Key << "quick" << YAML::Value << invocation.overrides.quick;
  out << YAML::Key << "target" << YAML::Value << YAML::DoubleQuoted
      << invocation.target.value_or("");
  out << YAML::EndMap;
  return "# The options this matrix was started with: `matrix --resume` runs with them.\n" +
         std::string(out.c_str()) + "\n";
}

MatrixInvocation parse_invocation(std::string_view yaml_text, std::string_view file_name) {
  try {
    const auto root = YAML::Load(std::string(yaml_text));
    MatrixInvocation invocation;
    invocation.overrides.duration_s = read_number(root["duration"]);
    invocation.overrides.repeats = read_number(root["repeats"]);
    invocation.overrides.scale = read_number(root["scale"]);
    invocation.overrides.quick = root["quick"] && root["quick"].as<bool>();
    invocation.target = root["target"] ? root["target"].as<std::string>() : std::string();
    return invocation;
  } catch (const YAML::Exception& error) {
    throw ConfigError(fmt::format("{}:{}:{}: not a matrix invocation: {}", file_name,
                                  error.mark.line + 1, error.mark.column + 1, error.msg));
  }
}

base::Expected<MatrixPlan> resumed_plan(MatrixPlan plan, const MatrixInvocation& saved,
                                        const MatrixInvocation& given) {
  apply_overrides(plan, saved.overrides);
  plan.target = saved.target.value_or(plan.target);
  MatrixPlan changed = plan;
  apply_overrides(changed, given.overrides);
  if (!same_cells(plan, changed)) return base::Error{contradiction(plan, given.overrides)};
  if (given.target && *given.target != plan.target) {
    return base::Error{
        fmt::format("--target {} contradicts the matrix's {}", quote(*given.target),
                    plan.target.empty() ? "scratch cluster" : "target " + quote(plan.target))};
  }
  return plan;
}

}  // namespace pgwaitprof::config
