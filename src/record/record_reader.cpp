// parse_record: untrusted bytes -> a validated Record or the reason they are unusable.
#include <exception>
#include <new>
#include <string>

#include "disttune/store.hpp"

namespace disttune {
namespace {

// Thrown by the parser callback when a list or map would open beyond kMaxRecordDepth.
struct TooDeep {};

// Parses JSON text, refusing nesting deeper than kMaxRecordDepth before it is built (the
// library's parser keeps its own stack; the limit bounds every later recursive walk:
// copies, comparisons, printing).
Value parse_bounded(std::string_view text) {
  const Value::parser_callback_t limit_depth = [](int depth, Value::parse_event_t event,
                                                  Value& /*parsed*/) {
    const bool opens = event == Value::parse_event_t::object_start ||
                       event == Value::parse_event_t::array_start;
    if (opens && static_cast<std::size_t>(depth) >= kMaxRecordDepth) throw TooDeep{};
    return true;
  };
  return Value::parse(text, limit_depth);
}

}  // namespace

RecordRead parse_record(std::string_view bytes) noexcept {
  RecordRead result;
  try {
    if (bytes.size() > kMaxRecordBytes) {
      result.error = "it is larger than " + std::to_string(kMaxRecordBytes) + " bytes";
      return result;
    }
    Value json;
    try {
      json = parse_bounded(bytes);
    } catch (const TooDeep&) {
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
