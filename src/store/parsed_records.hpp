// ParsedRecords: record files already parsed, reused while a file holds the same bytes.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "disttune/store.hpp"

namespace disttune::detail {

/// A store's memory of the record files its listings parsed (a warm start lists a
/// function's records at every new key). A file read again with exactly the same bytes
/// gives the earlier parse instead of a new one; any change of the bytes parses again, so
/// what is returned is always parse_record of what was read. Only the files of the latest
/// listing of each directory are kept, at most kMostRemembered of them and
/// kMostRememberedBytes of their bytes (their parses take about as much again); later files
/// are parsed every time. Thread-safe.
class ParsedRecords {
 public:
  static constexpr std::size_t kMostRemembered = 1024;
  static constexpr std::size_t kMostRememberedBytes = std::size_t{32} << 20;

  /// parse_record(bytes) of the file `name` in directory `dir`, parsed again only when the
  /// file held other bytes at the previous listing of `dir` (or was not in it).
  std::shared_ptr<const RecordRead> parse(const std::string& dir, const std::string& name, std::string bytes);
  /// Ends a listing of `dir`: the files it did not read are forgotten.
  void end_listing(const std::string& dir);

 private:
  struct Parsed {
    std::string bytes;
    std::shared_ptr<const RecordRead> read;
  };
  struct Directory {
    std::map<std::string, Parsed> previous;  ///< the files of the last finished listing
    std::map<std::string, Parsed> current;   ///< those of the listing under way
    std::size_t current_bytes = 0;           ///< the bytes of `current`'s files
  };

  std::mutex mutex_;
  std::map<std::string, Directory> directories_;
};

}  // namespace disttune::detail
