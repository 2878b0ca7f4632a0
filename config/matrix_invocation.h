// What a matrix directory keeps of the command that started it (invocation.yaml beside
// plan.yaml): the options that changed the plan (--duration, --repeats, --scale, --quick) and
// the server it runs on, without its password. `matrix --resume` runs the rest of the matrix as
// the first part ran, and refuses options that would make its cells unlike the ones done.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/expected.h"
#include "config/matrix_plan.h"

namespace pgwaitprof::config {

struct MatrixInvocation {
  PlanOverrides overrides;
  // The target the matrix runs on, its password removed ("" a scratch cluster); on a resume's
  // command line, the --target given (its password removed) or none.
  std::optional<std::string> target;
};

// invocation.yaml's text, and back (a ConfigError naming FILE:LINE:COLUMN when it is not one).
std::string invocation_yaml(const MatrixInvocation& invocation);
MatrixInvocation parse_invocation(std::string_view yaml_text, std::string_view file_name);

// The plan a resumed matrix runs: `plan` (the directory's plan.yaml) with the `saved`
// invocation applied, its target the saved one. An error (one line) when an option `given` on
// the resume's command line contradicts it; an option given as it was saved is accepted.
base::Expected<MatrixPlan> resumed_plan(MatrixPlan plan, const MatrixInvocation& saved,
                                        const MatrixInvocation& given);

}  // namespace pgwaitprof::config
