// The version and git revision of this build. They are compiled into one small generated file
// (base/build_info.cc.in, configured into the build directory), so a new commit recompiles that
// file alone and not every file that prints them (a compiler cache stays warm across commits).
#pragma once

namespace pgwaitprof::base {

extern const char* const kVersion;   // the project's version: "0.1.0"
extern const char* const kRevision;  // git rev-parse --short=12 HEAD at configure time

}  // namespace pgwaitprof::base
