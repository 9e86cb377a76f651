// The kinds of store the registry starts with, and what the registry keeps of each scheme.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "disttune/store_chain.hpp"

namespace disttune::detail {

class ClaimBoard;  // store/key_claims.hpp

/// A registered scheme as the registry keeps it.
struct SchemeEntry {
  StoreScheme scheme;
  /// The board on which sweeps that share the store claim keys (key_claims.hpp); empty for a
  /// scheme registered without one: sweeps then do not split keys through it.
  std::function<std::unique_ptr<ClaimBoard>(const std::string& url)> claim_board;
};

/// The directory store, scheme "file": file:///path (%-escapes decoded), or a plain path.
SchemeEntry directory_scheme();

/// The Redis store, schemes "redis" and "rediss" (store/redis/scheme.cpp; in a build
/// without hiredis their stores are a clear error).
std::vector<SchemeEntry> redis_schemes();

/// The boards of every store of the chain `urls` whose scheme has one, in chain order.
std::vector<std::unique_ptr<ClaimBoard>> claim_boards(const std::vector<std::string>& urls);

}  // namespace disttune::detail
