// tidy_function_dir: stale temporary files, kept records and logs, bounded per key.
#include "store/cache_hygiene.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string_view>
#include <vector>

namespace disttune::detail {
namespace {

constexpr std::size_t kFileIdLength = 64;

bool is_file_id(std::string_view text) {
  return text.size() == kFileIdLength &&
         std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The names of the entries of the directory `dir_fd` (without "." and "..").
std::vector<std::string> entry_names(int dir_fd) {
  std::vector<std::string> names;
  const int listing_fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (listing_fd < 0) return names;
  DIR* listing = fdopendir(listing_fd);
  if (listing == nullptr) {
    close(listing_fd);
    return names;
  }
  while (const dirent* entry = readdir(listing)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  closedir(listing);
  return names;
}

// Whether `name` is a regular file last modified before `limit`.
bool is_regular_file_older_than(int dir_fd, const std::string& name, time_t limit) {
  struct stat status {};
  return fstatat(dir_fd, name.c_str(), &status, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISREG(status.st_mode) && status.st_mtime < limit;
}

}  // namespace

void tidy_function_dir(int dir_fd, const std::string& file_id, std::size_t keep) noexcept {
  try {
    const time_t stale_before = time(nullptr) - kStaleTempAge.count();
    const std::string kept_prefix = file_id + ".json.";
    const std::string log_prefix = file_id + ".log-";
    std::vector<std::string> kept;                 // "<UTC>" names, newest last once sorted
    std::vector<std::string> logs;
    for (const std::string& name : entry_names(dir_fd)) {
      const std::string_view view = name;
      const std::size_t temp = view.find(".json.tmp-");
      if (temp == kFileIdLength && is_file_id(view.substr(0, kFileIdLength))) {
        if (is_regular_file_older_than(dir_fd, name, stale_before)) unlinkat(dir_fd, name.c_str(), 0);
      } else if (view.starts_with(kept_prefix)) {
        kept.push_back(name);
      } else if (view.starts_with(log_prefix)) {
        logs.push_back(name);
      }
    }
    std::sort(kept.begin(), kept.end(), std::greater<>());
    for (std::size_t i = keep; i < kept.size(); ++i) unlinkat(dir_fd, kept[i].c_str(), 0);

    // Each rank writes its own log of a tuning ("-rank<r>", stamped when it started): the
    // newest `keep` of each rank's logs stay.
    std::map<std::string, std::vector<std::string>> by_rank;  // rank suffix -> names
    for (const std::string& name : logs) {
      const std::size_t rank = name.find("-rank", log_prefix.size());
      by_rank[rank == std::string::npos ? "" : name.substr(rank)].push_back(name);
    }
    for (auto& [rank, names] : by_rank) {
      std::sort(names.begin(), names.end(), std::greater<>());
      for (std::size_t i = keep; i < names.size(); ++i) unlinkat(dir_fd, names[i].c_str(), 0);
    }
  } catch (...) {
    // Out of memory while listing: the next writer tidies instead.
  }
}

}  // namespace disttune::detail
