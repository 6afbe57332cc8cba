#include "tools/cli/osu_table.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace strata::tools {
namespace {

constexpr int kSizeWidth = 10;   // OSU's "%-10d"
constexpr int kFieldWidth = 20;  // OSU's FIELD_WIDTH
constexpr int kPrecision = 2;    // OSU's FLOAT_PRECISION

}  // namespace

OsuTable::OsuTable(std::vector<std::string> columns) : columns_(std::move(columns)) {
  for (const std::string& c : columns_) widths_.push_back(std::max(kFieldWidth, static_cast<int>(c.size()) + 2));
}

void OsuTable::comment(const std::string& text) { comments_.push_back("# " + text); }

void OsuTable::add_row(int64_t size, const std::vector<double>& values) {
  char cell[64];
  std::snprintf(cell, sizeof cell, "%-*" PRId64, kSizeWidth, size);
  std::string line = cell;
  for (size_t i = 0; i < columns_.size(); ++i) {
    const double v = i < values.size() ? values[i] : NAN;
    if (std::isfinite(v) && v > 0) {
      std::snprintf(cell, sizeof cell, "%*.*f", widths_[i], kPrecision, v);
    } else {
      std::snprintf(cell, sizeof cell, "%*s", widths_[i], "-");
    }
    line += cell;
  }
  rows_.push_back(line);
}

std::string OsuTable::str() const {
  std::string out;
  for (const std::string& c : comments_) out += c + "\n";
  char cell[128];
  std::snprintf(cell, sizeof cell, "%-*s", kSizeWidth, "# Size");
  out += cell;
  for (size_t i = 0; i < columns_.size(); ++i) {
    std::snprintf(cell, sizeof cell, "%*s", widths_[i], columns_[i].c_str());
    out += cell;
  }
  out += "\n";
  for (const std::string& r : rows_) out += r + "\n";
  return out;
}

double osu_mbps(int64_t bytes, double us) { return us > 0 ? static_cast<double>(bytes) / us : NAN; }

}  // namespace strata::tools
