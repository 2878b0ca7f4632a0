// Background activity flags.
#include "model/sample.h"

namespace pgwaitprof::model {

std::string Background::flags() const {
  std::string flags;
  auto add = [&](bool on, const char* flag) {
    if (!on) return;
    if (!flags.empty()) flags += ' ';
    flags += flag;
  };
  add(autovacuum, "av");
  add(checkpoint, "ch");
  add(manual_vacuum, "vac");
  return flags;
}

void Background::merge(const Background& other) {
  autovacuum |= other.autovacuum;
  checkpoint |= other.checkpoint;
  manual_vacuum |= other.manual_vacuum;
}

}  // namespace pgwaitprof::model
