// parse_record: untrusted bytes -> a validated Record or the reason they are unusable.
#include <exception>
#include <new>
#include <string>

#include "disttune/store.hpp"
#include "record/bounded_json.hpp"

namespace disttune {

Value detail::parse_bounded(std::string_view text, std::size_t max_depth) {
  const Value::parser_callback_t limit_depth = [max_depth](int depth, Value::parse_event_t event,
                                                           Value& /*parsed*/) {
    const bool opens = event == Value::parse_event_t::object_start ||
                       event == Value::parse_event_t::array_start;
    if (opens && static_cast<std::size_t>(depth) >= max_depth) throw TooDeep{};
    return true;
  };
  return Value::parse(text, limit_depth);
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
