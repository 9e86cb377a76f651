// What every store checks of a record it read: that its identity is the one asked for.
#pragma once

#include <string>
#include <string_view>

#include "disttune/store.hpp"

namespace disttune::detail {

/// The record `bytes` hold (parse_record), kept only when its identity is `id`; otherwise
/// the reason: parse_record's, or "its field 'F' does not match the record asked for".
RecordRead read_record_of(std::string_view bytes, const RecordId& id);

/// Whether `record` belongs to a listing of `like`'s function (Store::records_of): the same
/// function name, function digest and hardware digest (its key is any).
bool of_function(const Record& record, const RecordId& like);

}  // namespace disttune::detail
