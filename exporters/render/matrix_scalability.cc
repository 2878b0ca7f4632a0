// The scalability section of a matrix (the Universal Scalability Law fit of each variant, its
// knee and the waits that grow across it, computed in model/scalability.cc) as label/value
// facts and table rows that the text, Markdown and HTML renderers format and escape alike.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "exporters/render/matrix_detail.h"
#include "exporters/render/matrix_table.h"

namespace pgwaitprof::exporters::matrix_detail {

namespace {

// Decimals that show `significant_digits` of `value` (0.000494, 0.0189, 1188).
int decimals_for(double value, int significant_digits) {
  if (!std::isfinite(value) || value == 0) return 0;
  const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(value))));
  return std::clamp(significant_digits - 1 - magnitude, 0, 10);
}

std::string fixed(double value, int decimals) {
  if (std::isinf(value)) return value > 0 ? "∞" : "-∞";
  return fmt::format("{:.{}f}", value, decimals);
}

std::string percent(double fraction) { return fmt::format("{:.1f}", 100 * fraction); }

std::string signed_with_error(double change, double error, int decimals) {
  std::string text = fmt::format("{:+.{}f}", change, decimals);
  if (std::isfinite(error)) text += fmt::format(" ±{:.{}f}", error, decimals);
  return text;
}

}  // namespace

std::string scalability_title() {
  return "scalability (Universal Scalability Law X(N) = λN / (1 + σ(N-1) + κN(N-1)), fitted to "
         "every run)";
}

std::string scalability_note(const MatrixTable& table) {
  std::set<std::string> methods;
  for (const auto& variant : table.scalability) {
    if (variant.fit.fitted) methods.insert(variant.fit.interval_method);
  }
  std::string text =
      "σ contention, κ coherency, N* the peak; weighted least squares on relative "
      "residuals (Levenberg-Marquardt); 95 % intervals";
  if (!methods.empty()) {
    std::string joined;
    for (const auto& method : methods) joined += (joined.empty() ? "" : "; ") + method;
    text += ": " + joined;
  }
  return text;
}

std::string figure_text(const model::UslFigure& figure, int significant_digits) {
  if (!figure.constrained) return figure.note;
  const int decimals =
      decimals_for(figure.value != 0 ? figure.value : figure.high, significant_digits);
  return fmt::format("{} [{}, {}]", fixed(figure.value, decimals), fixed(figure.low, decimals),
                     fixed(figure.high, decimals));
}

std::vector<ScalabilityFact> scalability_facts(const model::VariantScalability& variant) {
  std::vector<ScalabilityFact> facts;
  const auto& fit = variant.fit;
  if (!fit.fitted) {
    facts.push_back({"model", "no fit: " + fit.reason});
    return facts;
  }
  facts.push_back({"λ, tps of one client", figure_text(fit.lambda, 4)});
  facts.push_back({"σ, contention", figure_text(fit.sigma, 3)});
  facts.push_back({"κ, coherency", figure_text(fit.kappa, 3)});
  facts.push_back({"N*, peak clients", figure_text(fit.peak_clients, 3)});
  facts.push_back({"X(N*), peak tps", figure_text(fit.peak_tps, 4)});
  std::string goodness = fmt::format("R² {:.3f}, cell medians off the curve by {:.1f} % (rms)",
                                     fit.r_squared, 100 * fit.rms_relative_error);
  if (fit.lack_of_fit_p) goodness += fmt::format(", lack-of-fit p {:.3f}", *fit.lack_of_fit_p);
  goodness += fmt::format("; {} runs at {} client counts", fit.points, fit.client_counts);
  facts.push_back({"fit", goodness});
  facts.push_back({"verdict", fit.verdict});
  const auto& knee = variant.knee;
  if (!knee.efficiency.empty()) {
    std::string efficiency;
    for (const auto& point : knee.efficiency) {
      efficiency += fmt::format("{}{}: {:.0f} %", efficiency.empty() ? "" : ", ", point.clients,
                                100 * point.efficiency);
    }
    facts.push_back({fmt::format("efficiency X(N)/(N·X(1)), X(1) {}",
                                 knee.single_client_measured ? "measured" : "the fit's λ"),
                     efficiency});
    facts.push_back({fmt::format("knee (efficiency below {:.0f} %)", 100 * knee.threshold),
                     knee.clients ? fmt::format("{} clients", *knee.clients) : "none"});
  }
  if (knee.departs_from_fit) {
    facts.push_back({fmt::format("median off the fit by > {:.0f} %", 100 * knee.departure),
                     fmt::format("at {} client{}", *knee.departs_from_fit,
                                 *knee.departs_from_fit == 1 ? "" : "s")});
  }
  facts.push_back({"across the knee", variant.headline});
  return facts;
}

std::vector<std::string> growth_headers() {
  return {"% below", "% above", "change", "AAS/client below", "above", "change"};
}

std::vector<CompositionRow> growth_rows(const model::VariantScalability& variant) {
  using Kind = CompositionRow::Kind;
  std::vector<CompositionRow> rows;
  auto row = [](Kind kind, const model::WaitGrowth& growth) {
    return CompositionRow{
        kind,
        growth.name,
        growth.wait_class,
        {percent(growth.share_below), percent(growth.share_above),
         signed_with_error(100 * growth.share_change, 100 * growth.share_change_error, 1),
         fmt::format("{:.3f}", growth.aas_per_client_below),
         fmt::format("{:.3f}", growth.aas_per_client_above),
         signed_with_error(growth.aas_per_client_change, growth.aas_per_client_change_error, 3)}};
  };
  for (const auto& growth : variant.classes) rows.push_back(row(Kind::kClass, growth));
  if (variant.events.empty()) return rows;
  rows.push_back(
      {Kind::kHeading, "top wait events", "", std::vector<std::string>(growth_headers().size())});
  auto events = variant.events;
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
    return std::abs(a.share_change) > std::abs(b.share_change);
  });
  if (events.size() > kShownEvents) events.resize(kShownEvents);
  for (const auto& growth : events) rows.push_back(row(Kind::kEvent, growth));
  return rows;
}

}  // namespace pgwaitprof::exporters::matrix_detail
