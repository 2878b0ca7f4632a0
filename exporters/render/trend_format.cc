// The format dispatch of trend's renderings.
#include "exporters/render/trend_format.h"

#include <fmt/format.h>

#include "base/json_text.h"
#include "exporters/render/text_format.h"

namespace pgwaitprof::exporters {
namespace {

namespace tf = exporters::text_format;

std::string html_table(const TrendParts& parts) {
  std::string html = "<table>\n";
  for (size_t index = 0; index < parts.rows.size(); ++index) {
    html += "<tr>";
    for (const auto& cell : parts.rows[index]) {
      const char* tag = index == 0 ? "th" : "td";
      const bool flag = index > 0 && parts.emphasised.contains(cell);
      html += fmt::format("<{}{}>{}</{}>", tag, flag ? " class=\"flag\"" : "",
                          tf::html_escape(cell), tag);
    }
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

}  // namespace

std::string render_trend_parts(const TrendParts& parts, const std::string& format) {
  if (format == "json") return base::json_text(parts.json(), 2) + "\n";
  if (format == "html") return parts.page(html_table(parts));
  if (format == "csv") {
    std::string csv;
    for (const auto& row : parts.rows) csv += tf::csv_row(row);
    return csv;
  }
  const bool table = parts.rows.size() > 1 || parts.table_when_empty;
  if (format == "md") {
    return parts.markdown_head + (table ? tf::markdown_table(parts.rows, parts.right) : "") +
           parts.markdown_tail;
  }
  if (!parts.text_instead.empty()) return parts.text_instead;
  return parts.text_head + (table ? tf::text_table(parts.rows, parts.right) : "") + parts.text_tail;
}

}  // namespace pgwaitprof::exporters
