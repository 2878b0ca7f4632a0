// The human-readable renderers of a run: the text report (the hackers' table and the
// pgbench-style timeline) and Markdown. report.json, the CSVs and folded stacks live in
// report_data.cc, render_html in report_html.cc.
#include "exporters/render/report_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "exporters/render/report_common.h"
#include "exporters/render/report_facts.h"
#include "exporters/render/report_sections.h"
#include "exporters/render/report_traced.h"
#include "exporters/render/text_format.h"
#include "exporters/render/timeline_table.h"

namespace pgwaitprof::exporters {

using namespace report_detail;
using namespace text_format;

namespace {

// ---------------------------------------------------------------------------------------------
// Text

class TextWriter {
 public:
  void line(const std::string& text = "") { out_ += rstrip(text) + '\n'; }
  void section(const std::string& title) {
    line();
    line(title);
  }
  // The keys are the report's own; the values come from the run.
  void facts(const std::vector<std::pair<std::string, std::string>>& facts, size_t indent) {
    size_t width = 0;
    for (const auto& [key, value] : facts) width = std::max(width, key.size());
    for (const auto& [key, value] : facts) {
      line(std::string(indent, ' ') + pad_right(key, width + 2) + text_escape(value));
    }
  }
  // Lines of a load generator's output, each escaped.
  void output_lines(std::string_view text) {
    for (size_t start = 0; start < text.size();) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      line("  " + text_escape(text.substr(start, end - start)));
      start = end + 1;
    }
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// The sampled sources' table: count, share, AAS and its error per row, the CPU row's kernel
// figures under it.
void text_sampled_table(TextWriter& out, const ProfileTable& table,
                        const std::vector<std::string>& labels, size_t width) {
  out.line(fmt::format("  {:>9}  {}  {:>6}  {:>7}  {}", "count", pad_right(table.dimension, width),
                       "share", "AAS", pad_left("± err", 6)));
  for (size_t index = 0; index < table.rows.size(); ++index) {
    const auto& row = table.rows[index];
    out.line(fmt::format("  {:>9}  {}  {:>6}  {:>7.2f}  {:>6}", row.stat.count,
                         pad_right(labels[index], width), percent(row.stat.share), row.stat.aas,
                         error_text(row.stat.aas_stderr, row.stat.errors_reliable, 2)));
    if (row.cpu_split) {
      for (const auto& sub : cpu_sub_rows(*row.cpu_split)) {
        out.line(fmt::format("  {:>9}  {}  {:>6}  {:>7.2f}", "",
                             pad_right(std::string("  ") + sub.label, width), percent(sub.share),
                             sub.aas));
      }
    }
  }
  out.line(fmt::format("  {:>9}  {}", "---------", std::string(width + 26, '-')));
  out.line(fmt::format("  {:>9}  {}  {:>6}  {:>7.2f}", table.total, pad_right("total", width),
                       table.total > 0 ? "100.0%" : "-", table.total_aas()));
  out.line("  (" + model::error_method_note() + ")");
}

void text_profile(TextWriter& out, const model::Run& run, const ProfileTable& table,
                  const RenderOptions& options) {
  out.section(profile_title(table, options) + ": " + profile_heading(run, table, options));
  if (!table.note.empty()) out.line("(" + table.note + ")");
  if (const auto excluded = table.window.description(); !excluded.empty()) {
    out.line("(" + excluded + "; --no-trim keeps it)");
  }
  std::vector<std::string> labels;
  labels.reserve(table.rows.size());
  for (const auto& row : table.rows) labels.push_back(text_escape(row.label));
  const size_t width = label_width(labels, table.dimension);
  if (run.profile.exact()) {
    for (const auto& line : traced_text_table(table, labels, width)) out.line(line);
  } else {
    text_sampled_table(out, table, labels, width);
  }
  if (table.idle.empty()) return;
  out.section("idle (not in shares): " + idle_amount(run, table));
  std::vector<std::string> idle_labels;
  idle_labels.reserve(table.idle.size());
  for (const auto& row : table.idle) idle_labels.push_back(text_escape(row.label));
  size_t idle_width = display_width("idle wait (backend type)");
  for (const auto& label : idle_labels) idle_width = std::max(idle_width, display_width(label));
  out.line(fmt::format("  {:>9}  {}  {:>7}", amount_header(run),
                       pad_right("idle wait (backend type)", idle_width), "AAS"));
  for (size_t index = 0; index < table.idle.size(); ++index) {
    out.line(fmt::format("  {:>9}  {}  {:>7.2f}", amount_text(run, table.idle[index].stat.count),
                         pad_right(idle_labels[index], idle_width), table.idle[index].stat.aas));
  }
}

void text_stderr(TextWriter& out, const model::Run& run) {
  if (run.loadgen_stderr.empty()) return;
  out.section("load generator stderr");
  out.output_lines(run.loadgen_stderr);
}

void text_loadgen(TextWriter& out, const model::Run& run) {
  if (run.loadgen) {
    out.section("load generator summary");
    for (const auto& summary_line : loadgen_summary_lines(*run.loadgen)) {
      out.line("  " + text_escape(summary_line));
    }
  } else {
    out.section(fmt::format("load generator summary: none (exit code {})", run.loadgen_exit_code));
  }
  if (run.status == model::RunStatus::kCompleted) text_stderr(out, run);
}

void text_timeline(TextWriter& out, const model::Run& run, const std::vector<TimelineRow>& rows) {
  if (rows.empty()) return;
  out.section("timeline (" + timeline_legend(run) + ")");
  auto table = timeline_table(run, rows);
  auto& columns = table.columns;
  // A text column is escaped and as wide as its longest cell; the last (bg) is not padded.
  for (size_t column = 0; column < columns.size(); ++column) {
    if (columns[column].numeric) continue;
    const bool padded = column + 1 < columns.size();
    if (padded) columns[column].text_width = display_width(columns[column].name);
    for (auto& row : table.rows) {
      row.cells[column] = text_escape(row.cells[column]);
      if (padded) {
        columns[column].text_width =
            std::max(columns[column].text_width, display_width(row.cells[column]));
      }
    }
  }
  // Two spaces before the first column, the first wait class, and on each side of a text column.
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t index = 0; index < columns.size(); ++index) {
      const auto& column = columns[index];
      const bool wide_gap = index == 0 || !column.numeric || !columns[index - 1].numeric ||
                            (column.wait_class && !columns[index - 1].wait_class);
      text += wide_gap ? "  " : " ";
      if (column.numeric) {
        text += fmt::format("{:>{}}", cells[index], column.text_width);
      } else {
        text += column.text_width > 0 ? pad_right(cells[index], column.text_width) : cells[index];
      }
    }
    return text;
  };
  std::vector<std::string> header;
  for (const auto& column : columns) header.push_back(column.name);
  out.line(line(header));
  for (const auto& row : table.rows) {
    std::string text = line(row.cells);
    if (row.stalled) text += row.cells.back().empty() ? "<- stall" : "  <- stall";
    if (row.sampler_outage) text += "  <- sampler disconnected";
    out.line(text);
  }
}

// One section as a padded table under its title and notes.
void text_section(TextWriter& out, const SectionTable& section) {
  out.section(text_escape(section.title));
  for (const auto& note : section.notes) out.line("  (" + text_escape(note) + ")");
  if (section.header.empty()) return;
  std::vector<std::vector<std::string>> rows{section.header};
  rows.insert(rows.end(), section.rows.begin(), section.rows.end());
  const std::string table = text_table(rows, section.right_aligned);
  size_t start = 0;
  for (size_t end; (end = table.find('\n', start)) != std::string::npos; start = end + 1) {
    out.line("  " + table.substr(start, end - start));
  }
}

// The explaining sections (run to run, kernel view, lock waits, statements, checkpoint).
void text_sections(TextWriter& out, const model::Run& run, const model::Summary& summary) {
  for (const auto& section : explaining_sections(run, summary)) text_section(out, section);
  if (run.statements.empty() && !run.statements_note.empty()) {
    out.section("statements: none (" + text_escape(run.statements_note) + ")");
  }
}

void text_tail(TextWriter& out, const model::Run& run) {
  if (!run.stalls.empty()) {
    out.section(fmt::format("stalls ({})", run.stalls.size()));
    for (const auto& stall : run.stalls) out.line("  " + text_escape(stall.summary()));
  } else if (!run.timeline.empty()) {
    out.section("stalls: none");
  }
  if (!run.warnings.empty()) {
    out.section("warnings");
    for (const auto& warning : run.warnings) out.line("  - " + text_escape(warning));
  }
  out.section("environment");
  out.facts(environment_facts(run.environment), 2);
  if (!run.environment.settings.empty()) {
    out.line("  non-default settings:");
    for (const auto& setting : run.environment.settings) {
      out.line("    " + text_escape(setting_line(setting)));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Markdown

std::string md_stderr(const model::Run& run) {
  if (run.loadgen_stderr.empty()) return "";
  return "\nLoad generator stderr:\n\n" + markdown_code_block(run.loadgen_stderr);
}

}  // namespace

std::string render_text(const model::Run& run, const RenderOptions& options) {
  const model::Summary summary = model::summarize(run, options);
  TextWriter out;
  out.line(fmt::format("pgwaitprof run {}{}", text_escape(run.id),
                       run.label.empty() ? "" : fmt::format(" \"{}\"", text_escape(run.label))));
  if (const auto banner = status_banner(run); !banner.empty()) {
    out.line();
    out.line("*** " + text_escape(banner) + " ***");
  }
  out.line();
  out.facts(header_facts(run, summary), 0);
  // A run that did not complete is read for why: the load generator's stderr comes first.
  if (run.status != model::RunStatus::kCompleted) text_stderr(out, run);
  text_profile(out, run, summary.profile, options);
  if (const auto note = cpu_row_note(summary); !note.empty()) out.line("  (" + note + ")");
  for (const auto& section : cpu_sections(run, summary)) text_section(out, section);
  text_loadgen(out, run);
  text_timeline(out, run, summary.timeline);
  text_sections(out, run, summary);
  text_tail(out, run);
  return out.take();
}

namespace {

// The sampled sources' table: count, share, AAS and its error per row, the CPU row's kernel
// figures under it.
std::string md_sampled_table(const ProfileTable& table) {
  std::string out =
      markdown_row({"count", markdown_escape(table.dimension), "share", "AAS", "± err"});
  out += "|---:|:---|---:|---:|---:|\n";
  for (const auto& row : table.rows) {
    out += markdown_row({fmt::format("{}", row.stat.count), markdown_escape(row.label),
                         percent(row.stat.share), fmt::format("{:.2f}", row.stat.aas),
                         error_text(row.stat.aas_stderr, row.stat.errors_reliable, 2)});
    if (row.cpu_split) {
      for (const auto& sub : cpu_sub_rows(*row.cpu_split)) {
        out += markdown_row({"", "&nbsp;&nbsp;" + markdown_escape(sub.label), percent(sub.share),
                             fmt::format("{:.2f}", sub.aas), ""});
      }
    }
  }
  out += markdown_row({fmt::format("**{}**", table.total), "**total**",
                       table.total > 0 ? "100.0%" : "-", fmt::format("{:.2f}", table.total_aas()),
                       ""});
  return out;
}

std::string md_profile(const model::Run& run, const ProfileTable& table,
                       const RenderOptions& options) {
  std::string out;
  std::string title = profile_title(table, options);
  title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
  out += "\n## " + markdown_escape(title) + "\n\n" +
         markdown_escape(profile_heading(run, table, options)) + ".\n\n";
  if (!table.note.empty()) out += markdown_escape(table.note) + ".\n\n";
  if (const auto excluded = table.window.description(); !excluded.empty()) {
    out += markdown_escape(excluded) + " (`--no-trim` keeps it).\n\n";
  }
  if (run.profile.exact()) {
    out += traced_markdown_table(table);
  } else {
    out += md_sampled_table(table);
  }
  if (!run.profile.exact()) out += "\n" + markdown_escape(model::error_method_note()) + ".\n";
  if (const auto meanings = row_meanings(run, table); !meanings.empty()) {
    out += "\nWhat the events above mean (`pgwaitprof explain EVENT` says more):\n\n";
    for (const auto& [label, meaning] : meanings) {
      out += "- **" + markdown_escape(label) + "**: " + markdown_escape(meaning) + "\n";
    }
  }
  if (!table.idle.empty()) {
    out += "\n### Idle (not in shares)\n\n" + markdown_escape(idle_amount(run, table)) + ".\n\n";
    out += markdown_row({amount_header(run), "idle wait (backend type)", "AAS"}) +
           "|---:|:---|---:|\n";
    for (const auto& row : table.idle) {
      out += markdown_row({amount_text(run, row.stat.count), markdown_escape(row.label),
                           fmt::format("{:.2f}", row.stat.aas)});
    }
  }

  return out;
}

std::string md_loadgen(const model::Run& run) {
  std::string out;
  out += "\n## Load generator\n\n";
  if (run.loadgen) {
    out += markdown_code_block(loadgen_summary_lines(*run.loadgen));
  } else {
    out += fmt::format("No summary (exit code {}).\n", run.loadgen_exit_code);
  }
  if (run.status == model::RunStatus::kCompleted) out += md_stderr(run);

  return out;
}

std::string md_timeline(const model::Run& run, const std::vector<TimelineRow>& rows) {
  if (rows.empty()) return "";
  std::string out = "\n## Timeline\n\n" + markdown_escape(timeline_legend(run)) + ".\n\n";
  const auto table = timeline_table(run, rows);
  std::vector<std::string> header;
  std::string alignment = "|";
  for (const auto& column : table.columns) {
    header.push_back(column.name);
    alignment += column.numeric ? "---:|" : ":---|";
  }
  out += markdown_row(header) + alignment + "\n";
  for (const auto& row : table.rows) {
    std::vector<std::string> cells;
    for (size_t index = 0; index < row.cells.size(); ++index) {
      cells.push_back(table.columns[index].numeric ? row.cells[index]
                                                   : markdown_escape(row.cells[index]));
    }
    cells.back() += std::string(row.stalled ? " **stall**" : "") +
                    (row.sampler_outage ? " **sampler disconnected**" : "");
    out += markdown_row(cells);
  }
  return out;
}

std::string md_section(const SectionTable& section) {
  std::string title = section.title;
  title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
  std::string out = "\n## " + markdown_escape(title) + "\n\n";
  for (const auto& note : section.notes) out += markdown_escape(note) + "\n\n";
  if (section.header.empty()) return out;
  std::vector<std::vector<std::string>> rows{section.header};
  rows.insert(rows.end(), section.rows.begin(), section.rows.end());
  return out + markdown_table(rows, section.right_aligned);
}

std::string md_environment(const model::Environment& environment) {
  std::string out;
  out += "\n## Environment\n\n" + markdown_row({"", ""}) + "|---|---|\n";
  for (const auto& [key, value] : environment_facts(environment)) {
    out += markdown_row({key, markdown_escape(value)});
  }
  if (!environment.settings.empty()) {
    out += "\nNon-default settings:\n\n";
    out += markdown_row({"name", "value", "unit", "as SHOW prints it", "source"});
    out += "|:---|---:|:---|---:|:---|\n";
    for (const auto& setting : environment.settings) {
      out += markdown_row(
          {markdown_code(setting.name), markdown_code(setting.value), markdown_escape(setting.unit),
           markdown_escape(setting_show_value(setting)), markdown_escape(setting.source)});
    }
  }
  return out;
}

}  // namespace

std::string render_markdown(const model::Run& run, const RenderOptions& options) {
  const model::Summary summary = model::summarize(run, options);
  std::string out = fmt::format("# pgwaitprof run {}{}\n\n", markdown_code(run.id),
                                run.label.empty() ? "" : ": " + markdown_escape(run.label));
  if (const auto banner = status_banner(run); !banner.empty()) {
    out += "> **" + markdown_escape(banner) + "**\n\n";
  }
  out += markdown_row({"", ""}) + "|---|---|\n";
  for (const auto& [key, value] : header_facts(run, summary)) {
    const bool code = key == "target" || key == "command";
    out += markdown_row({key, code ? markdown_code(value) : markdown_escape(value)});
  }

  if (run.status != model::RunStatus::kCompleted) out += md_stderr(run);

  out += md_profile(run, summary.profile, options);
  if (const auto note = cpu_row_note(summary); !note.empty()) {
    out += "\n" + markdown_escape(note) + "\n";
  }
  for (const auto& section : cpu_sections(run, summary)) out += md_section(section);
  out += md_loadgen(run);
  out += md_timeline(run, summary.timeline);
  for (const auto& section : explaining_sections(run, summary)) out += md_section(section);
  if (run.statements.empty() && !run.statements_note.empty()) {
    out += "\n## Statements\n\nNone: " + markdown_escape(run.statements_note) + ".\n";
  }
  out += "\n## Stalls\n\n";
  if (run.stalls.empty()) out += "None.\n";
  for (const auto& stall : run.stalls) out += "- " + markdown_escape(stall.summary()) + "\n";
  if (!run.warnings.empty()) {
    out += "\n## Warnings\n\n";
    for (const auto& warning : run.warnings) out += "- " + markdown_escape(warning) + "\n";
  }

  out += md_environment(run.environment);
  return out;
}

}  // namespace pgwaitprof::exporters
