// Reading a record file safely: never through a symbolic link, only a regular file, never
// more than the reader's size limit.
#pragma once

#include <sys/stat.h>

#include <string>

namespace disttune::detail {

/// The bytes of one record file, or why there are none.
struct RecordFileBytes {
  enum class Problem {
    none,        ///< `bytes` holds the whole file
    absent,      ///< there is no entry of that name
    unusable,    ///< the entry can never be a record (link, not a regular file, too large)
    unreadable,  ///< it could not be opened or read now (permissions, I/O error)
  };
  Problem problem = Problem::none;
  std::string error;     ///< why, in words, when problem is not none
  struct stat seen {};   ///< the entry looked at (valid unless absent or unreadable)
  std::string bytes;
};

/// Reads `name` relative to the directory `dir_fd` (AT_FDCWD: a path). The last component
/// is never followed if it is a symbolic link; FIFOs, sockets, devices and directories are
/// not opened for reading (or not read). Never throws for what is on disk.
RecordFileBytes read_record_file(int dir_fd, const std::string& name);

}  // namespace disttune::detail
