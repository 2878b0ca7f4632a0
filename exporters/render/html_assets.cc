// The inlined scripts and styles of the HTML pages; see html_assets.h.
#include "exporters/render/html_assets.h"

#include <stdexcept>

namespace pgwaitprof::exporters::html_assets {

std::string_view asset(std::string_view name) {
  const auto& assets = embedded_assets();
  const auto found = assets.find(name);
  if (found == assets.end()) {
    throw std::out_of_range("no embedded asset \"" + std::string(name) + "\"");
  }
  return found->second;
}

std::string head_assets() {
  std::string html = "<style>";
  html += asset("uPlot.min.css");
  html += "\n";
  html += asset("charts.css");
  html += "</style>\n<script>";
  html += asset("record_errors.js");
  html += "</script>\n";
  return html;
}

std::string body_scripts() {
  // MIT asks for the notice in every copy: the page is one.
  std::string html = "<script>/*! uPlot, vendored from exporters/render/vendor/uplot\n";
  html += asset("LICENSE");
  html += "\n*/\n";
  html += asset("uPlot.iife.min.js");
  html += "</script>\n<script>";
  html += asset("charts.js");
  html += "</script>\n";
  return html;
}

namespace {

// d3-flame-graph and the d3 modules it needs, in load order: each after the ones it requires
// (vendor/d3-flamegraph/README.md).
constexpr std::string_view kFlameScripts[] = {
    "d3-array.min.js",      "d3-color.min.js",         "d3-dispatch.min.js",    "d3-ease.min.js",
    "d3-format.min.js",     "d3-interpolate.min.js",   "d3-selection.min.js",   "d3-timer.min.js",
    "d3-transition.min.js", "d3-time.min.js",          "d3-time-format.min.js", "d3-scale.min.js",
    "d3-hierarchy.min.js",  "d3-flamegraph.umd.min.js"};

}  // namespace

std::string flame_scripts() {
  // Every licence asks for its notice in every copy: the page is one.
  std::string html =
      "<script>/*! d3 modules and d3-flame-graph, vendored from "
      "exporters/render/vendor/d3-flamegraph\n";
  for (const char* licence : {"LICENSE.d3", "LICENSE.d3-ease", "LICENSE.d3-flame-graph"}) {
    html += asset(licence);
    html += "\n";
  }
  html += "*/\n";
  for (const auto name : kFlameScripts) {
    html += asset(name);
    html += "\n";
  }
  return html + "</script>\n";
}

std::string script_safe_json(std::string_view json) {
  std::string safe;
  safe.reserve(json.size());
  for (const char c : json) {
    switch (c) {
      case '<':
        safe += "\\u003c";
        break;
      case '>':
        safe += "\\u003e";
        break;
      case '&':
        safe += "\\u0026";
        break;
      default:
        safe += c;
    }
  }
  return safe;
}

}  // namespace pgwaitprof::exporters::html_assets
