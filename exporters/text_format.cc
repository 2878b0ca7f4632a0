// The shared formatting helpers of the exporters; see text_format.h.
#include "exporters/text_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

namespace pgwaitprof::exporters::text_format {

namespace {

// The entity of a character HTML reads as markup; quotes only where `quotes` (attributes).
const char* html_entity(char c, bool quotes) {
  switch (c) {
    case '&':
      return "&amp;";
    case '<':
      return "&lt;";
    case '>':
      return "&gt;";
    case '"':
      return quotes ? "&quot;" : nullptr;
    case '\'':
      return quotes ? "&#39;" : nullptr;
    default:
      return nullptr;
  }
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  if (values.size() % 2 == 1) return values[middle];
  return (values[middle - 1] + values[middle]) / 2;
}

std::string format_tps(double tps) {
  return tps >= 100 ? fmt::format("{:.0f}", tps) : fmt::format("{:.1f}", tps);
}

size_t display_width(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string pad_right(std::string_view text, size_t width) {
  const size_t used = display_width(text);
  return std::string(text) + std::string(used < width ? width - used : 0, ' ');
}

std::string pad_left(std::string_view text, size_t width) {
  const size_t used = display_width(text);
  return std::string(used < width ? width - used : 0, ' ') + std::string(text);
}

std::string rstrip(std::string text) {
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string text_table(const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right_aligned) {
  std::vector<size_t> widths(right_aligned.size(), 0);
  for (const auto& row : rows) {
    for (size_t column = 0; column < row.size(); ++column) {
      widths[column] = std::max(widths[column], display_width(row[column]));
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t column = 0; column < row.size(); ++column) {
      if (column > 0) line += "  ";
      line += right_aligned[column] ? pad_left(row[column], widths[column])
                                    : pad_right(row[column], widths[column]);
    }
    out += rstrip(std::move(line)) + '\n';
  }
  return out;
}

std::string markdown_escape(std::string_view text, MarkdownEscape mode) {
  const bool html = mode == MarkdownEscape::kMarkupAndHtml;
  const std::string_view backslashed = html ? "|\\*_`[]" : "|\\*_`";
  std::string escaped;
  for (const char c : text) {
    if (backslashed.find(c) != std::string_view::npos) {
      escaped += '\\';
      escaped += c;
    } else if (const char* entity = html ? html_entity(c, false) : nullptr) {
      escaped += entity;
    } else if (html && c == '\n') {
      escaped += ' ';
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string markdown_row(const std::vector<std::string>& cells) {
  std::string row = "|";
  for (const auto& cell : cells) row += " " + cell + " |";
  return row + "\n";
}

std::string markdown_table(const std::vector<std::vector<std::string>>& rows,
                           const std::vector<bool>& right_aligned) {
  std::string out;
  for (size_t index = 0; index < rows.size(); ++index) {
    std::vector<std::string> cells;
    cells.reserve(rows[index].size());
    for (const auto& cell : rows[index]) cells.push_back(markdown_escape(cell));
    out += markdown_row(cells);
    if (index == 0) {
      out += "|";
      for (const bool right : right_aligned) out += right ? " --: |" : " --- |";
      out += "\n";
    }
  }
  return out;
}

std::string html_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    if (const char* entity = html_entity(c, true)) {
      escaped += entity;
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string row;
  for (size_t index = 0; index < fields.size(); ++index) {
    if (index > 0) row += ',';
    row += csv_field(fields[index]);
  }
  return row + "\n";
}

bool wait_class_before(std::string_view a, std::string_view b) {
  const auto rank = [](std::string_view wait_class) {
    return std::find(kWaitClassOrder.begin(), kWaitClassOrder.end(), wait_class) -
           kWaitClassOrder.begin();
  };
  const auto rank_a = rank(a);
  const auto rank_b = rank(b);
  return rank_a != rank_b ? rank_a < rank_b : a < b;
}

std::string_view wait_class_colour(std::string_view wait_class) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kColours = {{
      {"CPU", "#2ca02c"},
      {"LWLock", "#e377c2"},
      {"Lock", "#d62728"},
      {"IO", "#1f77b4"},
      {"IPC", "#9467bd"},
      {"Client", "#8c8c8c"},
      {"Timeout", "#bcbd22"},
      {"BufferPin", "#ff7f0e"},
      {"Extension", "#8c564b"},
      {"Activity", "#17becf"},
  }};
  for (const auto& [name, colour] : kColours) {
    if (name == wait_class) return colour;
  }
  return "#393b79";
}

}  // namespace pgwaitprof::exporters::text_format
