// parse_record: untrusted bytes -> a validated Record or the reason they are unusable.
#include <exception>
#include <new>
#include <string>

#include "disttune/store.hpp"
#include "record/bounded_json.hpp"

namespace disttune {
namespace {

// Throws TooDeep when a list or map in `text` opens beyond `max_depth` levels: one pass,
// brackets inside strings skipped (what is not JSON is left for the parser to refuse).
void refuse_deep_nesting(std::string_view text, std::size_t max_depth) {
  std::size_t open = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character ends no string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (open >= max_depth) throw detail::TooDeep{};
      ++open;
    } else if ((c == ']' || c == '}') && open > 0) {
      --open;
    }
  }
}

}  // namespace

// The depth is checked before the library parses: its parser with a callback (the other
// way to bound it) scans the whole enclosing list at the end of each map in it, work
// quadratic in a record's candidates.
Value detail::parse_bounded(std::string_view text, std::size_t max_depth) {
  refuse_deep_nesting(text, max_depth);
  return Value::parse(text);
}

RecordRead parse_record(std::string_view bytes) noexcept {
  RecordRead result;
  try {
    if (bytes.size() > kMaxRecordBytes) {
      result.error = "it is larger than " + std::to_string(kMaxRecordBytes) + " bytes";
      return result;
    }
    Value json;
    try {
      json = detail::parse_bounded(bytes, kMaxRecordDepth);
    } catch (const detail::TooDeep&) {
      result.error = "it nests deeper than " + std::to_string(kMaxRecordDepth) + " levels";
      return result;
    } catch (const Value::exception& error) {
      result.error = std::string("it is not valid JSON: ") + error.what();
      return result;
    }
    result.record = record_from_json(json);
  } catch (const std::bad_alloc&) {
    result.record.reset();
    result.error = "it needs more memory than is available to read";
  } catch (const std::exception& error) {
    result.record.reset();
    result.error = error.what();
  }
  return result;
}

}  // namespace disttune
