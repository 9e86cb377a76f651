// The default distance between keys: log2 of sizes, equality of everything else.
#include <cmath>
#include <cstddef>

#include "disttune/config.hpp"
#include "disttune/warm_start.hpp"
#include "record/bounded_json.hpp"

namespace disttune {
namespace {

// A key's JSON, nesting bounded (a key read from a record is untrusted), so the walk below
// recurses at most kMaxValueDepth levels.
Value parse_key(const std::string& text) {
  return detail::parse_bounded(text, kMaxValueDepth);
}

double distance(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>();
    const double y = b.get<double>();
    if (x > 0.0 && y > 0.0 && std::isfinite(x) && std::isfinite(y)) return std::abs(std::log2(x) - std::log2(y));
    return x == y ? 0.0 : kKeyPartsDiffer;
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    double sum = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) sum += distance(a[i], b[i]);
    return sum;
  }
  if (a.is_object() && b.is_object() && a.size() == b.size()) {
    double sum = 0.0;
    for (auto member = a.begin(); member != a.end(); ++member) {
      const auto other = b.find(member.key());
      if (other == b.end()) return kKeyPartsDiffer;
      sum += distance(member.value(), *other);
    }
    return sum;
  }
  return a == b ? 0.0 : kKeyPartsDiffer;
}

}  // namespace

double default_key_distance(const std::string& a, const std::string& b) noexcept {
  try {
    return distance(parse_key(a), parse_key(b));
  } catch (...) {  // not JSON (or too deep for the parser): one part
    return a == b ? 0.0 : kKeyPartsDiffer;
  }
}

}  // namespace disttune
