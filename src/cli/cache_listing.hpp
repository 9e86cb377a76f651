// The disk cache as the command line sees it: function directories, record files, ids.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "disttune/store.hpp"

namespace disttune::cli {

/// One "*.json" file in a function directory.
struct RecordFile {
  std::string function;                 ///< the directory's name, as on disk
  std::filesystem::path path;
  std::optional<std::string> refused;  ///< why the engine refuses its directory, if it does
};

/// A record file and what the engine's reader made of it.
struct ListedRecord {
  RecordFile file;
  RecordRead read;
};

/// The record files under one root, read only through the engine's store and record reader
/// (its name checks, ownership checks and validation: never a second validator).
class CacheListing {
 public:
  explicit CacheListing(std::filesystem::path root);

  const DiskStore& store() const { return store_; }
  const std::filesystem::path& root() const { return store_.root(); }

  /// The function directories: the one named (which must exist; CliError otherwise) or
  /// all of them, sorted by name. CliError if the root is absent or not a directory.
  std::vector<std::pair<std::string, std::filesystem::path>> function_dirs(
      const std::string& function) const;
  /// Every "*.json" file of the chosen function directories, by function, then name.
  std::vector<RecordFile> record_files(const std::string& function) const;
  /// Each of record_files(function) read by the engine's reader (read-only).
  std::vector<ListedRecord> records(const std::string& function) const;
  /// The record file that `file_or_id` names: a path, or a unique prefix of a file id.
  std::filesystem::path resolve(const std::string& file_or_id) const;

  /// Removes the cache files (records, kept records, entries moved aside, logs) of one
  /// function or all; with `older_than` above zero only those last modified longer ago.
  /// Returns (function, files removed) per directory; an emptied directory goes too.
  std::vector<std::pair<std::string, std::size_t>> clear(const std::string& function,
                                                         std::chrono::seconds older_than) const;

 private:
  DiskStore store_;
};

/// "<function>/<file>: <why it is not a valid record>", as `list` and `export` name a bad file.
std::string bad_record_line(const ListedRecord& listed);

/// "<number><unit>" (s, m, h or d) as a duration, e.g. "30d", "12h"; CliError otherwise.
std::chrono::seconds parse_age(const std::string& text);

}  // namespace disttune::cli
