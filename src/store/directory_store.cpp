// DiskStore: records under <root>/<function name>/<id>.json, read and written by the
// reliability rules in store.hpp.
#include "disttune/store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "util/atomic_file.hpp"
#include "store/cache_dir.hpp"
#include "store/cache_hygiene.hpp"
#include "store/parsed_records.hpp"
#include "store/record_identity.hpp"
#include "record/record_file.hpp"
#include "disttune/settings.hpp"
#include "util/unique_fd.hpp"
#include "util/utc_time.hpp"
#include "report/readable_text.hpp"
#include "report/warning.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;
using detail::AtomicFile;
using detail::CacheDir;
using detail::CacheDirError;
using detail::UniqueFd;

std::string error_text(int error) {
  return std::strerror(error);
}

bool is_safe_directory_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name.front() == '.') return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// Holds flock(LOCK_EX) on a directory: writers of one function directory take turns to
// keep the previous record and rename the new one in; readers never lock.
class DirectoryLock {
 public:
  explicit DirectoryLock(int dir_fd) : dir_fd_(dir_fd) {
    while (flock(dir_fd_, LOCK_EX) != 0) {
      if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "cannot lock");
    }
  }
  ~DirectoryLock() { flock(dir_fd_, LOCK_UN); }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int dir_fd_;
};

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Copies the regular file `from` to `to` (a new name) in one directory, atomically.
void copy_file(int dir_fd, const std::string& from, const std::string& to) {
  UniqueFd source(openat(dir_fd, from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!source) throw std::system_error(errno, std::generic_category(), "cannot open " + from);
  AtomicFile copy(dir_fd, to);
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = read(source.get(), buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "cannot read " + from);
    }
    copy.write(std::string_view(buffer, static_cast<std::size_t>(got)));
  }
  copy.commit();
}

// Before `file` is replaced, keeps what is there as "<file>.<UTC>": a hard link, or a
// copy where the file system has none. Call with the directory locked.
void keep_previous(int dir_fd, const std::string& file) {
  struct stat status {};
  if (fstatat(dir_fd, file.c_str(), &status, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return;
    throw std::system_error(errno, std::generic_category(), "cannot inspect " + file);
  }
  if (!S_ISREG(status.st_mode) && !S_ISLNK(status.st_mode)) {
    // A socket, FIFO, device or directory is no record to keep: it is moved aside.
    const std::string id = file.substr(0, file.size() - std::string_view(".json").size());
    const std::string aside = id + ".bad-" + detail::utc_file_stamp_now();
    if (renameat(dir_fd, file.c_str(), dir_fd, aside.c_str()) != 0) {
      throw std::system_error(errno, std::generic_category(), "cannot move " + file + " aside");
    }
    detail::warn("moved " + file + " aside to " + aside + ": it is not a regular file");
    return;
  }
  const std::string stamp = file + "." + detail::utc_file_stamp_now();
  for (int attempt = 0;; ++attempt) {
    const std::string backup = attempt == 0 ? stamp : stamp + "-" + std::to_string(attempt);
    if (linkat(dir_fd, file.c_str(), dir_fd, backup.c_str(), 0) == 0) return;
    if (errno == EEXIST) continue;
    const bool no_hard_links = errno == EPERM || errno == EOPNOTSUPP || errno == EMLINK;
    if (!no_hard_links || !S_ISREG(status.st_mode)) {
      throw std::system_error(errno, std::generic_category(),
                              "cannot keep " + file + " as " + backup);
    }
    copy_file(dir_fd, file, backup);
    return;
  }
}

// A record file "<id>.json" that cannot be used: warned about once, then moved aside to
// "<id>.bad-<UTC>" unless another writer has replaced it since it was looked at.
void set_aside(const CacheDir& dir, const std::string& file, const struct stat& seen,
               const std::string& reason) {
  const fs::path path = dir.path() / file;
  std::string outcome;
  try {
    DirectoryLock lock(dir.fd());
    struct stat now {};
    if (fstatat(dir.fd(), file.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0 || !same_file(now, seen)) {
      outcome = "it was replaced meanwhile; left in place";
    } else {
      const std::string id = file.substr(0, file.size() - std::string_view(".json").size());
      const std::string aside = id + ".bad-" + detail::utc_file_stamp_now();
      if (renameat(dir.fd(), file.c_str(), dir.fd(), aside.c_str()) == 0) {
        fsync(dir.fd());
        outcome = "moved aside to " + aside;
      } else {
        outcome = "could not move it aside: " + error_text(errno);
      }
    }
  } catch (const std::system_error& error) {
    outcome = std::string("could not move it aside: ") + error.what();
  }
  detail::warn_once("bad record " + path.string(), "ignoring cache record " + path.string() + ": " +
                                                       reason + " (" + outcome + "); it is a miss");
}

// The function directory under `root`, checked; nullopt if absent (and !create) or
// refused, which is warned about once per directory.
std::optional<CacheDir> open_function_dir(const fs::path& root, const std::string& name,
                                          bool create) {
  try {
    auto root_dir = CacheDir::open(root, create);
    if (!root_dir) return std::nullopt;
    return root_dir->open_child(name, create);
  } catch (const CacheDirError& error) {
    detail::warn_once("refused directory " + error.path().string(),
                      std::string("not using cache directory ") + error.what() +
                          "; tuning results stay in memory");
    return std::nullopt;
  }
}

}  // namespace

std::string RecordId::file_id() const {
  return digest_of_parts({function_digest, hardware_digest, key});
}

std::string RecordId::first_difference(const RecordId& other) const {
  if (function_name != other.function_name) return "function.name";
  if (function_digest != other.function_digest) return "function.digest";
  if (hardware_digest != other.hardware_digest) return "hardware_digest";
  if (key != other.key) return "key";
  return {};
}

fs::path default_cache_root() { return cache_root_setting(); }

std::size_t default_kept_per_key() { return cache_keep_setting(); }

void check_record_key(const std::string& key) {
  if (key.size() > kMaxKeyBytes) {
    throw std::invalid_argument("disttune: the key text is " + std::to_string(key.size()) +
                                " bytes; a cache record holds keys of at most " +
                                std::to_string(kMaxKeyBytes) + " bytes (use a shorter key_fn)");
  }
}

DiskStore::DiskStore(fs::path root, std::size_t kept_per_key)
    : root_(std::move(root)), kept_per_key_(kept_per_key), parsed_(std::make_shared<detail::ParsedRecords>()) {}

fs::path DiskStore::function_dir(const std::string& function_name) const {
  if (!is_safe_directory_name(function_name)) {
    throw std::invalid_argument("disttune: function name '" +
                                detail::printable_line(function_name) +
                                "' is not a safe directory name (letters, digits, '_', '-', '.'; "
                                "no leading '.'; at most 255 characters)");
  }
  return root_ / function_name;
}

fs::path DiskStore::record_path(const RecordId& id) const {
  check_record_key(id.key);
  return function_dir(id.function_name) / (id.file_id() + ".json");
}

std::optional<fs::path> DiskStore::usable_function_dir(const std::string& function_name) const {
  const fs::path path = function_dir(function_name);
  if (!open_function_dir(root_, function_name, /*create=*/true)) return std::nullopt;
  return path;
}

std::optional<std::string> DiskStore::refusal(const std::string& function_name) const {
  try {
    const auto root_dir = CacheDir::open(root_, /*create=*/false);
    if (root_dir) root_dir->open_child(function_dir(function_name).filename().string(), false);
  } catch (const CacheDirError& error) {
    return error.what();
  }
  return std::nullopt;
}

std::optional<Record> DiskStore::load(const RecordId& id) const {
  const std::string file = record_path(id).filename().string();
  const auto dir = open_function_dir(root_, id.function_name, /*create=*/false);
  if (!dir) return std::nullopt;
  const fs::path path = dir->path() / file;

  const detail::RecordFileBytes read = detail::read_record_file(dir->fd(), file);
  switch (read.problem) {
    case detail::RecordFileBytes::Problem::none: break;
    case detail::RecordFileBytes::Problem::absent: return std::nullopt;
    case detail::RecordFileBytes::Problem::unusable:
      set_aside(*dir, file, read.seen, read.error);
      return std::nullopt;
    case detail::RecordFileBytes::Problem::unreadable:
      detail::warn_once("unreadable record " + path.string(),
                        "cannot read cache record " + path.string() + ": " + read.error);
      return std::nullopt;
  }
  RecordRead parsed = detail::read_record_of(read.bytes, id);
  if (!parsed.record) set_aside(*dir, file, read.seen, parsed.error);
  return std::move(parsed.record);
}

std::vector<Record> DiskStore::records_of(const RecordId& like, std::size_t most,
                                          const std::set<std::string>& known) const {
  std::vector<Record> records;
  try {
    if (!is_safe_directory_name(like.function_name)) return records;
    const auto dir = open_function_dir(root_, like.function_name, /*create=*/false);
    if (!dir) return records;
    std::error_code error;
    for (fs::directory_iterator entry(dir->path(), error), end; !error && entry != end && records.size() < most;
         entry.increment(error)) {
      const std::string name = entry->path().filename().string();
      const bool record_name = name.size() == 64 + 5 && name.ends_with(".json") &&
                               name.find_first_not_of("0123456789abcdef") == 64;
      if (!record_name || known.contains(name.substr(0, 64))) continue;
      detail::RecordFileBytes read = detail::read_record_file(dir->fd(), name);
      if (read.problem != detail::RecordFileBytes::Problem::none) continue;
      const std::shared_ptr<const RecordRead> parsed = parsed_->parse(dir->path().string(), name, std::move(read.bytes));
      if (!parsed->record) continue;  // a bad record is the load()'s to set aside, for its key
      if (detail::of_function(*parsed->record, like) && parsed->record->id.file_id() + ".json" == name) {
        records.push_back(*parsed->record);
      }
    }
    parsed_->end_listing(dir->path().string());
  } catch (const std::exception&) {  // a directory that changed under us: what was read
  }
  return records;
}

RecordRead read_record(const fs::path& path) {
  RecordRead result;
  const detail::RecordFileBytes read = detail::read_record_file(AT_FDCWD, path.string());
  if (read.problem != detail::RecordFileBytes::Problem::none) {
    result.error = read.problem == detail::RecordFileBytes::Problem::absent
                       ? "cannot open it: " + error_text(ENOENT)
                       : read.error;
    return result;
  }
  result = parse_record(read.bytes);
  if (!result.record) return result;
  const RecordId& id = result.record->id;
  const std::string expected = id.file_id() + ".json";
  if (path.filename() != expected) {
    result.error = "its name does not match its identity (expected " + expected + ")";
  } else if (path.parent_path().filename() != id.function_name) {
    result.error = "it is not in the directory of its function '" + id.function_name + "'";
  }
  if (!result.error.empty()) result.record.reset();
  return result;
}

std::optional<fs::path> DiskStore::save(const Record& record) const {
  const fs::path path = record_path(record.id);
  const std::string file = path.filename().string();
  std::string text;
  try {
    text = record_to_json(record).dump(2) + "\n";  // stamped by build_record
  } catch (const std::exception& error) {
    detail::warn("not saving cache record " + path.string() + ": " + error.what());
    return std::nullopt;
  }
  if (text.size() > kMaxRecordBytes) {
    detail::warn("not saving cache record " + path.string() + ": it would be " +
                 std::to_string(text.size()) + " bytes, over the reader's limit of " +
                 std::to_string(kMaxRecordBytes) + "; the result stays in memory");
    return std::nullopt;
  }

  const auto dir = open_function_dir(root_, record.id.function_name, /*create=*/true);
  if (!dir) return std::nullopt;
  try {
    AtomicFile out(dir->fd(), file);
    out.write(text);
    DirectoryLock lock(dir->fd());
    keep_previous(dir->fd(), file);
    out.commit();
    detail::tidy_function_dir(dir->fd(), record.id.file_id(), kept_per_key_);
  } catch (const std::system_error& error) {
    detail::warn("cannot save cache record " + path.string() + ": " + error.what());
    return std::nullopt;
  }
  return path;
}

}  // namespace disttune
