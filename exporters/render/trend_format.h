// The one format dispatch of `trend`'s renderings (its MAD rule's table and its change points):
// what each is made of, and the text, Markdown, CSV, JSON or HTML of it.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace pgwaitprof::exporters {

struct TrendParts {
  std::vector<std::vector<std::string>> rows;  // the table, its header first
  std::vector<bool> right;                     // right-aligned columns
  std::function<nlohmann::json()> json;
  std::function<std::string(const std::string& table)> page;  // the HTML page around the table
  std::set<std::string> emphasised;  // cells the HTML table marks (class "flag")
  // Text and Markdown: head, the table, tail; the table left out when it has no row and
  // `table_when_empty` is false; `text_instead`, when not "", is the whole text.
  std::string text_head, text_tail, markdown_head, markdown_tail, text_instead;
  bool table_when_empty = true;
};

std::string render_trend_parts(const TrendParts& parts, const std::string& format);

}  // namespace pgwaitprof::exporters
