// The identity checks every store makes of what it read.
#include "store/record_identity.hpp"

namespace disttune::detail {

RecordRead read_record_of(std::string_view bytes, const RecordId& id) {
  RecordRead read = parse_record(bytes);
  if (!read.record) return read;
  if (const std::string field = read.record->id.first_difference(id); !field.empty()) {
    return RecordRead{.record = std::nullopt,
                      .error = "its field '" + field + "' does not match the record asked for"};
  }
  return read;
}

bool of_function(const Record& record, const RecordId& like) {
  return record.id.function_name == like.function_name &&
         record.id.function_digest == like.function_digest &&
         record.id.hardware_digest == like.hardware_digest;
}

}  // namespace disttune::detail
