// AtomicFile: a file written under a temporary name and renamed into place on commit.
#pragma once

#include <string>
#include <string_view>

#include "util/unique_fd.hpp"

namespace disttune::detail {

/// Writes `name` in a directory so that readers see the old file or the whole new one,
/// never a part: bytes go to "<name>.tmp-<random>" (created 0600, O_EXCL, O_NOFOLLOW),
/// and commit() fsyncs it, renames it over `name` and fsyncs the directory. Destroyed
/// without a commit, it removes its temporary file. Move-only. Errors throw
/// std::system_error naming the file.
class AtomicFile {
 public:
  /// `dir_fd` is borrowed and must stay open while this object lives.
  AtomicFile(int dir_fd, std::string name);
  ~AtomicFile();
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Appends bytes to the temporary file.
  void write(std::string_view bytes);

  /// Makes the written bytes durable and visible under the final name.
  void commit();

  const std::string& name() const { return name_; }
  /// The temporary file's name (empty once committed).
  const std::string& temp_name() const { return temp_name_; }

 private:
  void discard() noexcept;

  int dir_fd_ = -1;
  std::string name_;
  std::string temp_name_;
  UniqueFd fd_;
};

}  // namespace disttune::detail
