// The timeline's table as the text, Markdown and HTML reports show it: the same columns in the
// same order, each cell's text as the figure is written ("-" where there is none), unescaped.
// Each renderer escapes the cells and lays the table out; timeline.csv keeps columns of its own,
// in the order its older readers know.
#pragma once

#include <string>
#include <vector>

#include "model/run.h"
#include "model/summary.h"

namespace pgwaitprof::exporters::report_detail {

struct TimelineTable {
  struct Column {
    std::string name;         // the text and Markdown reports' header
    std::string title;        // the page's header, where it has the room to say more
    bool numeric = true;      // right-aligned; the others (the dominant wait, bg) are text
    bool wait_class = false;  // a wait class's AAS (the page draws its colour beside it)
    size_t text_width = 0;    // the text report's width (a text column's: its longest cell's)
  };
  struct Row {
    std::vector<std::string> cells;  // one per column
    bool stalled = false;            // the interval is inside a stall
    bool sampler_outage = false;     // the sampler was disconnected during part of it
  };
  std::vector<Column> columns;
  std::vector<Row> rows;
};

TimelineTable timeline_table(const model::Run& run, const std::vector<model::TimelineRow>& rows);

}  // namespace pgwaitprof::exporters::report_detail
