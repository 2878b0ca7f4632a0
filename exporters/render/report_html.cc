// render_html: one self-contained page per run: inline CSS, the timeline drawn by uPlot from
// data embedded in the page (report_html_charts.cc, with a static SVG fallback), the top-waits
// SVG (report_html_svg.cc), and the tables. Nothing is fetched, so the file can be mailed or
// attached as is.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "exporters/render/html_assets.h"
#include "exporters/render/report_common.h"
#include "exporters/render/report_facts.h"
#include "exporters/render/report_html_charts.h"
#include "exporters/render/report_render.h"
#include "exporters/render/report_sections.h"
#include "exporters/render/report_traced.h"
#include "exporters/render/text_format.h"
#include "exporters/render/timeline_table.h"

namespace pgwaitprof::exporters {

using namespace report_detail;
using namespace text_format;

namespace {

// Idle sessions and sleeping background processes, apart from the shares.
std::string html_idle_table(const model::Run& run, const ProfileTable& table) {
  if (table.idle.empty()) return "";
  std::string html = fmt::format(
      "<div><h3>Idle (not in shares): {}</h3>\n<table class=\"idle\"><thead><tr><th "
      "class=\"n\">{}</th><th>idle wait (backend type)</th><th class=\"n\">AAS</th></tr></thead>"
      "<tbody>\n",
      html_escape(idle_amount(run, table)), amount_header(run));
  for (const auto& row : table.idle) {
    html += fmt::format("<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{:.2f}</td></tr>\n",
                        amount_text(run, row.stat.count), html_escape(row.label), row.stat.aas);
  }
  return html + "</tbody></table></div>\n";
}

// With `cpu_link`, the CPU row leads to "where the CPU went".
std::string html_profile_table(const model::Run& run, const ProfileTable& table,
                               const RenderOptions& options, bool cpu_link) {
  if (run.profile.exact()) {
    return "<div class=\"tables\"><div>\n" + traced_html_table(table) + "</div>\n" +
           html_idle_table(run, table) + "</div>\n";
  }
  std::string html = "<table class=\"profile\">\n<thead><tr><th class=\"n\">count</th><th>" +
                     html_escape(table.dimension) +
                     "</th><th class=\"n\">share</th><th class=\"n\">AAS</th><th class=\"n\">± "
                     "err</th><th>meaning</th></tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    const std::string meaning = row_meaning(run, row);
    html += fmt::format(
        "<tr{}><td class=\"n\">{}</td><td{}>{}{}</td><td class=\"n\">{:.1f}%</td><td "
        "class=\"n\">{:.2f}</td><td class=\"n\">{}</td><td class=\"meaning\">{}</td></tr>\n",
        row.other ? " class=\"other\"" : "", row.stat.count,
        meaning.empty() ? "" : " title=\"" + html_escape(meaning) + "\"", swatch(row.wait_class),
        cpu_link && !row.other && row.label == model::kCpu
            ? fmt::format("<a href=\"#{}\">{}</a>", kCpuAnchor, html_escape(row.label))
            : html_escape(row.label),
        100 * row.stat.share, row.stat.aas,
        error_text(row.stat.aas_stderr, row.stat.errors_reliable, 2), html_escape(meaning));
    if (row.cpu_split) {
      for (const auto& sub : cpu_sub_rows(*row.cpu_split)) {
        html += fmt::format(
            "<tr class=\"sub\"><td></td><td class=\"sub\">{}</td><td class=\"n\">{:.1f}%</td><td "
            "class=\"n\">{:.2f}</td><td></td><td class=\"meaning\">{}</td></tr>\n",
            html_escape(sub.label), 100 * sub.share, sub.aas, html_escape(sub.meaning));
      }
    }
  }
  html += fmt::format(
      "<tr class=\"total\"><td class=\"n\">{}</td><td>total</td><td class=\"n\">{}</td><td "
      "class=\"n\">{:.2f}</td><td></td><td></td></tr>\n</tbody></table>\n",
      table.total, table.total > 0 ? "100.0%" : "-", table.total_aas());
  std::string intro = fmt::format("{} samples in {} snapshots", table.total, table.snapshots);
  if (options.by != GroupBy::kQueryId) {
    intro += options.include_idle ? ", idle sessions included" : ", idle sessions not counted";
  }
  intro += "; ascending, as posted to pgsql-hackers. AAS = average active sessions; " +
           model::error_method_note() + ".";
  if (const auto excluded = table.window.description(); !excluded.empty()) {
    intro += " The " + excluded + " (--no-trim keeps it).";
  }
  if (!table.note.empty()) intro += " Note: " + table.note + ".";
  html = "<p class=\"note\">" + html_escape(intro) + "</p>\n<div class=\"tables\"><div>\n" + html +
         "</div>\n";

  html += html_idle_table(run, table);
  return html + "</div>\n";
}

// The text report's timeline table (timeline_table.h), its wait classes with their colours.
std::string html_timeline_table(const model::Run& run, const std::vector<TimelineRow>& rows) {
  const auto table = timeline_table(run, rows);
  std::string html = "<table class=\"timeline\"><thead><tr>";
  for (const auto& column : table.columns) {
    html += fmt::format("<th{}>{}{}</th>", column.numeric ? " class=\"n\"" : "",
                        column.wait_class ? swatch(column.name) : "", html_escape(column.title));
  }
  html += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    html += row.stalled ? "<tr class=\"stall\">" : "<tr>";
    for (size_t index = 0; index < row.cells.size(); ++index) {
      html += fmt::format("<td{}>{}", table.columns[index].numeric ? " class=\"n\"" : "",
                          html_escape(row.cells[index]));
      if (index + 1 == row.cells.size()) {
        html += std::string(row.stalled ? " <b>stall</b>" : "") +
                (row.sampler_outage ? " <b>sampler disconnected</b>" : "");
      }
      html += "</td>";
    }
    html += "</tr>\n";
  }
  return html + "</tbody></table>\n";
}

std::string fact_rows(const std::vector<std::pair<std::string, std::string>>& facts,
                      bool code_values = false) {
  std::string html;
  for (const auto& [key, value] : facts) {
    html += "<tr><th>" + html_escape(key) + "</th><td>" +
            (code_values ? "<code>" + html_escape(value) + "</code>" : html_escape(value)) +
            "</td></tr>\n";
  }
  return html;
}

std::string card(const std::string& key, const std::string& value, const std::string& detail) {
  return R"(<div class="card"><div class="k">)" + html_escape(key) + R"(</div><div class="v">)" +
         html_escape(value) + "</div><div class=\"d\">" + html_escape(detail) + "</div></div>\n";
}

constexpr std::string_view kStyle = R"css(
:root{--fg:#1d2330;--muted:#5b6475;--line:#e3e6ec}
*{box-sizing:border-box}
body{margin:0;background:#f5f6f8;color:var(--fg);
 font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1200px;margin:0 auto;padding:20px 24px 40px}
h1{font-size:22px;margin:0 0 2px}
h1 .id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:15px;
 color:var(--muted);font-weight:500;margin-left:8px}
h2{font-size:16px;margin:26px 0 8px}
h3{font-size:14px;margin:0 0 6px}
.tables{display:flex;flex-wrap:wrap;gap:16px 32px;align-items:flex-start}
.tables table.idle{font-size:12.5px}
.durations{display:grid;grid-template-columns:repeat(auto-fit,minmax(420px,1fr));gap:8px 24px}
.banner+h3{margin-top:10px}
.sub{color:var(--muted)}
.status{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;
 background:#def7ec;color:#03543f;margin-left:6px}
.banner{padding:10px 14px;border-radius:6px;font-weight:600;margin:12px 0;white-space:pre-wrap}
.banner.failed{background:#fde8e8;border:1px solid #e02424;color:#9b1c1c}
.banner.interrupted{background:#fef3c7;border:1px solid #d97706;color:#92400e}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:12px;margin:16px 0}
.card{background:#fff;border:1px solid var(--line);border-radius:8px;padding:10px 14px}
.card .k{color:var(--muted);font-size:11.5px;text-transform:uppercase;letter-spacing:.05em}
.card .v{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums;white-space:nowrap}
.card .d{color:var(--muted);font-size:12px}
.panel{background:#fff;border:1px solid var(--line);border-radius:8px;padding:12px 16px;
 overflow-x:auto}
svg{display:block;width:100%;height:auto;font-family:inherit}
svg text{font-size:12px;fill:#3b4252}
svg .axis-title{fill:var(--muted)}
svg .lane{font-weight:600}
svg .stall{fill:#e02424;fill-opacity:.12}
svg .stall-label{fill:#b42318;font-weight:600}
svg .tps{fill:none;stroke:#111827;stroke-width:2;stroke-linejoin:round}
svg .tps-dots circle{fill:#111827}
svg .tps-tick{fill:#111827}
svg .err{stroke:#111827;stroke-width:1.3;fill:none}
svg .value{fill:#3b4252}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:8px 0 2px 62px;font-size:12.5px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px}
.stall-sw{background:#e024241f;border:1px solid #e0242466}
.line-sw{display:inline-block;width:16px;height:0;border-top:2px solid #111827;margin-right:5px;
 vertical-align:middle}
table{border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{padding:3px 10px;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap}
thead th{font-weight:600;color:var(--muted);font-size:12.5px;border-bottom:1px solid #c9ced8}
.n{text-align:right}
tr.total td{font-weight:600;border-top:1px solid #c9ced8}
tr.other td{color:var(--muted);font-style:italic}
td.sub{padding-left:1.6em}
td.meaning{color:var(--muted);font-size:12px;max-width:420px;white-space:normal}
table.section td{white-space:normal}
table.section td.n{white-space:nowrap}
td.text{max-width:480px}
.bar{display:flex;width:160px;height:12px;border-radius:2px;overflow:hidden;background:#eef0f4}
.bar span{display:block;height:100%}
tr.stall td{background:#fdecec}
table.facts th{color:var(--muted);font-weight:500;width:1%}
table.facts td{white-space:normal}
.note{color:var(--muted);font-size:12.5px;margin:4px 0 8px}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{background:#1f2430;color:#e8e8e8;padding:10px 12px;border-radius:6px;overflow:auto}
ul.warnings li{color:#92400e}
details summary{cursor:pointer;font-weight:600;margin:6px 0}
#tip{position:absolute;display:none;pointer-events:none;background:#141821eb;color:#fff;
 padding:6px 9px;border-radius:5px;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;
 white-space:pre;z-index:10}
)css";

constexpr std::string_view kScript = R"js(
(function () {
  var tip = document.getElementById('tip');
  document.querySelectorAll('[data-tip]').forEach(function (el) {
    el.addEventListener('mousemove', function (e) {
      tip.textContent = el.getAttribute('data-tip');
      tip.style.display = 'block';
      var x = e.pageX + 14;
      if (x + tip.offsetWidth > document.documentElement.scrollWidth) x = e.pageX - tip.offsetWidth - 14;
      tip.style.left = x + 'px';
      tip.style.top = (e.pageY + 14) + 'px';
    });
    el.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  });
})();
)js";

std::string html_head(const model::Run& run) {
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<title>" +
          html_escape(fmt::format("pgwaitprof: {}{}", run.label.empty() ? run.id : run.label,
                                  run.status == model::RunStatus::kCompleted
                                      ? ""
                                      : " (" + std::string(to_string(run.status)) + ")")) +
          "</title>\n" + html_assets::head_assets() + "<style>" + std::string(kStyle) +
          "</style>\n</head>\n";
  return html;
}

std::string html_title(const model::Run& run) {
  std::string html = "<h1>" + html_escape(run.label.empty() ? run.workload : run.label) +
                     "<span class=\"id\">" + html_escape(run.id) + "</span>";
  if (run.status == model::RunStatus::kCompleted) html += "<span class=\"status\">completed</span>";
  html += "</h1>\n";
  std::string subtitle = run.workload;
  if (run.clients > 0) subtitle += fmt::format(", {} clients", run.clients);
  subtitle += fmt::format(", {:.1f} s, started {}", run.duration.count(), run.started_at);
  html += "<div class=\"sub\">" + html_escape(subtitle) + "</div>\n";
  if (const auto banner = status_banner(run); !banner.empty()) {
    html += fmt::format("<div class=\"banner {}\">{}</div>\n", std::string(to_string(run.status)),
                        html_escape(banner));
    // Why it failed is the first thing to read: the load generator's own words go up here.
    if (!run.loadgen_stderr.empty()) {
      html +=
          "<h3>load generator stderr</h3>\n<pre>" + html_escape(run.loadgen_stderr) + "</pre>\n";
    }
  }
  return html;
}

std::string html_cards(const model::Run& run, const model::Summary& summary) {
  std::string html = "<div class=\"cards\">\n";
  if (run.loadgen) {
    html += card(
        "throughput", fmt::format("{:.1f} tps", run.loadgen->tps),
        fmt::format("{} transactions, {} failed", run.loadgen->transactions, run.loadgen->failed));
    if (std::isfinite(run.loadgen->latency_avg.count())) {
      html += card("latency", fmt::format("{:.3f} ms", run.loadgen->latency_avg.count()),
                   run.loadgen->latency_stddev ? fmt::format("average; stddev {:.3f} ms",
                                                             run.loadgen->latency_stddev->count())
                                               : std::string("average"));
    }
  } else if (const auto& mean = summary.timeline_mean_tps) {
    html += card("throughput", fmt::format("{:.1f} tps", *mean), "mean of intervals; no summary");
  } else {
    html += card("throughput", "–", "no load generator summary");
  }
  html += card("active sessions",
               run.profile.snapshots() > 0 ? fmt::format("{:.2f}", summary.active_sessions)
                                           : std::string("–"),
               run.clients > 0 ? fmt::format("AAS, non-idle; {} clients", run.clients)
                               : std::string("AAS, non-idle"));
  html += card("sampling", fmt::format("{:.1f} Hz", run.sampler.achieved_hz),
               fmt::format("of {:g} Hz; {} snapshots, {} missed", run.sampler.hz,
                           run.sampler.snapshots, run.sampler.missed_ticks));
  html += card("stalls", fmt::format("{}", run.stalls.size()),
               run.stalls.empty() ? std::string("no interval below 20% of median tps")
                                  : run.stalls.front().summary());
  return html + "</div>\n";
}

std::string html_list(const std::string& title, const std::vector<std::string>& items,
                      const std::string& list_class = "") {
  if (items.empty()) return "";
  std::string html = "<h2>" + title + "</h2>\n<ul" +
                     (list_class.empty() ? "" : " class=\"" + list_class + "\"") + ">\n";
  for (const auto& item : items) html += "<li>" + html_escape(item) + "</li>\n";
  return html + "</ul>\n";
}

std::string html_loadgen(const model::Run& run) {
  std::string html = "<h2>Load generator</h2>\n";
  if (run.loadgen) {
    std::string summary;
    for (const auto& line : loadgen_summary_lines(*run.loadgen)) summary += line + "\n";
    html += "<pre>" + html_escape(summary) + "</pre>\n";
  } else {
    html += fmt::format("<p>No summary (exit code {}).</p>\n", run.loadgen_exit_code);
  }
  if (!run.loadgen_stderr.empty() && run.status == model::RunStatus::kCompleted) {
    html += "<h3>stderr</h3>\n<pre>" + html_escape(run.loadgen_stderr) + "</pre>\n";
  }
  return html;
}

std::string html_run_facts(const model::Run& run, const model::Summary& summary) {
  std::string html = "<h2>Run</h2>\n<div class=\"panel\"><table class=\"facts\">\n";
  std::vector<std::pair<std::string, std::string>> facts = {
      {"id", run.id},
      {"status", std::string(to_string(run.status))},
      {"target", run.target},
      {"workload", run.workload},
  };
  if (!run.tags.empty()) facts.emplace_back("tags", model::tags_text(run.tags));
  if (!run.variant.empty()) facts.emplace_back("variant", run.variant);
  if (run.repeat > 0) facts.emplace_back("repeat", fmt::format("{}", run.repeat));
  html += fact_rows(facts);
  html += fact_rows({{"command", shell_join(run.loadgen_argv)}}, true);
  html += fact_rows({{"exit code", fmt::format("{}", run.loadgen_exit_code)},
                     {"started", run.started_at},
                     {"ended", run.ended_at},
                     {"duration", fmt::format("{:.3f} s", run.duration.count())}});
  if (auto tps = tps_headline_text(summary.tps, summary.window); !tps.empty()) {
    html += fact_rows({{"tps", tps}});
  }
  if (!run.throughput_source.empty()) {
    html += fact_rows({{"tps from", model::throughput_source_text(run)}});
  }
  if (auto latency = latency_percentiles_text(run); !latency.empty()) {
    html += fact_rows({{"latency", latency}});
  }
  html += fact_rows({{"sampler", sampler_line(run.sampler)}});
  if (auto check = kernel_check_line(run, summary); !check.empty()) {
    html += fact_rows({{"check", check}});
  }
  return html + "</table></div>\n";
}

std::string html_environment(const model::Environment& env) {
  std::string html = "<h2>Environment</h2>\n<div class=\"panel\"><table class=\"facts\">\n";
  // The same facts as the text and Markdown reports (the sampler host's too).
  html += fact_rows(report_detail::environment_facts(env)) + "</table>\n";
  if (!env.settings.empty()) {
    html +=
        "<h3>Non-default settings</h3>\n<table><thead><tr><th>name</th><th class=\"n\">value</th>"
        "<th>unit</th><th class=\"n\">as SHOW prints it</th><th>source</th></tr></thead><tbody>\n";
    for (const auto& setting : env.settings) {
      html += "<tr><td><code>" + html_escape(setting.name) + "</code></td><td class=\"n\">" +
              html_escape(setting.value) + "</td><td>" + html_escape(setting.unit) +
              "</td><td class=\"n\">" + html_escape(setting_show_value(setting)) + "</td><td>" +
              html_escape(setting.source) + "</td></tr>\n";
    }
    html += "</tbody></table>\n";
  }
  return html + "</div>\n";
}

}  // namespace

// A section that explains the waits (kernel view, lock blockers, statements) as a table; rows
// with wait-class shares get a stacked bar.
std::string html_section(const report_detail::SectionTable& table) {
  std::string title = table.title;
  if (!title.empty())
    title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
  std::string html =
      (table.anchor.empty() ? "<h2>" : "<h2 id=\"" + html_escape(table.anchor) + "\">") +
      html_escape(title) + "</h2>\n<div class=\"panel\">\n";
  for (const auto& note : table.notes) html += "<p class=\"note\">" + html_escape(note) + "</p>\n";
  if (table.header.empty()) return html + "</div>\n";
  const bool bars = !table.bars.empty();
  html += "<table class=\"section\"><thead><tr>";
  if (bars) html += "<th>wait classes</th>";
  for (size_t column = 0; column < table.header.size(); ++column) {
    html += fmt::format("<th{}>{}</th>", table.right_aligned[column] ? " class=\"n\"" : "",
                        html_escape(table.header[column]));
  }
  html += "</tr></thead>\n<tbody>\n";
  for (size_t index = 0; index < table.rows.size(); ++index) {
    html += "<tr>";
    if (bars) {
      html += "<td><span class=\"bar\">";
      for (const auto& [wait_class, share] : table.bars[index]) {
        html += fmt::format(
            R"(<span style="width:{:.1f}%;background:{}" title="{} {:.0f}%"></span>)", 100 * share,
            wait_class_colour(wait_class), html_escape(wait_class), 100 * share);
      }
      html += "</span></td>";
    }
    const auto& row = table.rows[index];
    for (size_t column = 0; column < row.size(); ++column) {
      const bool wide = table.header[column] == "statement";
      html += fmt::format(
          "<td{}>{}</td>",
          table.right_aligned[column] ? " class=\"n\""
          : wide                      ? " class=\"text\""
                                      : "",
          wide ? "<code>" + html_escape(row[column]) + "</code>" : html_escape(row[column]));
    }
    html += "</tr>\n";
  }
  return html + "</tbody></table>\n</div>\n";
}

// The wait stacks' flame graph, then where the CPU went: the client backends' top functions,
// their flame graph (its frames in the CPU row's colour), the busiest background process.
std::string html_flame_sections(const model::Run& run, const model::Summary& summary) {
  std::string html =
      "<h2>Wait stacks</h2>\n" +
      html_flame_panel(
          "flame-waits",
          flame_tree("all", summary.wait_stacks, wait_flame_style(summary.cpu ? "flame-cpu" : "")),
          std::string("A frame's width is its share of the run's samples: backend type, wait "
                      "class, wait event. Click a frame to zoom in, the root to zoom out.") +
              (summary.cpu ? " The CPU frames lead to the CPU's flame graph." : ""),
          "The flame graph needs JavaScript; the same stacks are in waits.folded.");
  const auto sections = cpu_sections(run, summary);
  for (size_t index = 0; index < sections.size(); ++index) {
    html += html_section(sections[index]);
    if (index != 0) continue;
    html += html_flame_panel(
        "flame-cpu", flame_tree("client backends", summary.cpu->stacks, cpu_flame_style()),
        "The client backends' on-CPU stacks: a frame's width is its share of their samples, "
        "callers below callees; kernel functions darker. Click a frame to zoom in.",
        "The flame graph needs JavaScript; the same stacks are in cpu.folded.");
  }
  return html;
}

std::string render_html(const model::Run& run, const RenderOptions& options) {
  const model::Summary summary = model::summarize(run, options);
  const auto& rows = summary.timeline;
  std::string html =
      html_head(run) + "<body>\n<main>\n" + html_title(run) + html_cards(run, summary);
  if (!rows.empty()) {
    html += "<h2>Average active sessions by wait class, and throughput</h2>\n" +
            html_timeline_panel(run, rows);
  }
  html += "<h2>Top wait events</h2>\n<div class=\"panel\">\n" +
          svg_top_waits(summary.waits, options) + "</div>\n";
  html += "<h2>Wait event profile</h2>\n<div class=\"panel\">\n" +
          html_profile_table(run, summary.profile, options, summary.cpu.has_value()) + "</div>\n";
  if (const auto durations = svg_wait_durations(summary.waits); !durations.empty()) {
    html +=
        "<h2>Wait durations</h2>\n<div class=\"panel\">\n<p class=\"note\">Blocking waits of "
        "the wait events with the most blocked time, by duration (traced, exact; "
        "logarithmic axis, 4 buckets per power of two).</p>\n" +
        durations + "</div>\n";
  }
  html += html_flame_sections(run, summary);
  std::vector<std::string> stalls;
  for (const auto& stall : run.stalls) stalls.push_back(stall.summary());
  for (const auto& section :
       {report_detail::run_to_run_section(run), report_detail::kernel_section(summary),
        report_detail::lock_section(run, summary), report_detail::statements_section(run)}) {
    if (section) html += html_section(*section);
  }
  if (run.statements.empty() && !run.statements_note.empty()) {
    html += "<p class=\"note\">statements: " + html_escape(run.statements_note) + "</p>\n";
  }
  html += html_list("Stalls", stalls);
  html += html_list("Warnings", run.warnings, "warnings");
  html += html_loadgen(run);
  if (!rows.empty()) {
    html += fmt::format(
        "<details>\n<summary>Timeline: {} interval{} of {} s</summary>\n<div class=\"panel\">\n",
        rows.size(), rows.size() == 1 ? "" : "s", format_seconds(run.interval.count()));
    html += html_timeline_table(run, rows) + "</div>\n</details>\n";
  }
  html += html_run_facts(run, summary) + html_environment(run.environment);
  html += "</main>\n<div id=\"tip\"></div>\n<script>" + std::string(kScript) + "</script>\n";
  html += html_assets::flame_scripts() + html_assets::body_scripts();
  if (!rows.empty()) {
    html +=
        "<script>pgwaitprof.draw('timeline', 'timeline-chart', 'timeline-data', "
        "'timeline-info');</script>\n";
  }
  html += "<script>pgwaitprof.draw('flame', 'flame-waits', 'flame-waits-data');</script>\n";
  if (summary.cpu) {
    html += "<script>pgwaitprof.draw('flame', 'flame-cpu', 'flame-cpu-data');</script>\n";
  }
  return html + "</body>\n</html>\n";
}

}  // namespace pgwaitprof::exporters
