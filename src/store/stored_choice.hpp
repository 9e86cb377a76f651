// Stored choice: whether a stored record may answer the current call.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "disttune/fingerprint.hpp"
#include "disttune/store.hpp"

namespace disttune::detail {

/// Loads the record for `id` and, if it may be used, sets `choice` to the index of its
/// best config among `candidates` (the current, pruned list). A best config that is not
/// among them is a miss. A record whose deps differ from `fingerprint.deps` warns and is
/// used, or is a miss when `version_check` is set.
std::optional<Record> load_usable_record(const Store& store, const RecordId& id,
                                         const std::vector<std::string>& candidates,
                                         const Fingerprint& fingerprint, bool version_check,
                                         std::optional<std::size_t>& choice);

}  // namespace disttune::detail
