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
