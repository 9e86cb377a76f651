// FunctionIdentity: who a tuned function is, as its records and cache directory name it.
#pragma once

#include <string>

namespace disttune {

/// Who a tuned function is: its name (the cache directory) and a digest of its source or
/// an explicit version. A different digest never reuses a stored result.
struct FunctionIdentity {
  std::string name;
  std::string digest;
};

}  // namespace disttune
