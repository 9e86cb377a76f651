// disttune: inspects and clears the disk cache of tuning records (list, show, verify, clear).
#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "disttune/function_tuner.hpp"
#include "disttune/settings.hpp"
#include "disttune/store.hpp"

namespace {

namespace fs = std::filesystem;
using disttune::DiskStore;
using disttune::Record;
using disttune::RecordRead;

// A problem with the command's input or the cache: printed and exit code 1.
struct CliError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One "*.json" file in a function directory.
struct RecordFile {
  std::string function;
  fs::path path;
  std::optional<std::string> refused;  ///< why the engine refuses its directory, if it does
};

bool is_real_directory(const fs::path& path) {
  std::error_code error;
  return fs::symlink_status(path, error).type() == fs::file_type::directory;
}

// The root, checked to be a directory (not a link to one).
fs::path checked_root(const DiskStore& store) {
  std::error_code error;
  const fs::file_type type = fs::symlink_status(store.root(), error).type();
  if (type == fs::file_type::not_found) {
    throw CliError("cache root " + store.root().string() + " does not exist");
  }
  if (type != fs::file_type::directory) {
    throw CliError("cache root " + store.root().string() + " is not a directory");
  }
  return store.root();
}

// The function directories to look at: the one named (which must exist) or all of them.
std::vector<std::pair<std::string, fs::path>> function_dirs(const DiskStore& store,
                                                            const std::string& function) {
  const fs::path root = checked_root(store);
  std::vector<std::pair<std::string, fs::path>> dirs;
  if (!function.empty()) {
    fs::path dir;
    try {
      dir = store.function_dir(function);
    } catch (const std::invalid_argument& error) {
      throw CliError(error.what());
    }
    if (!is_real_directory(dir)) {
      throw CliError("unknown function '" + function + "': no directory " + dir.string());
    }
    dirs.emplace_back(function, dir);
    return dirs;
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (name.front() != '.' && is_real_directory(entry.path())) dirs.emplace_back(name, entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

// Why the engine would not read records in the directory of `function`, if it would not.
std::optional<std::string> refusal(const DiskStore& store, const std::string& function) {
  try {
    return store.refusal(function);
  } catch (const std::invalid_argument& error) {
    return std::string(error.what());
  }
}

// Every "*.json" file of the chosen function directories, sorted by function, then name.
std::vector<RecordFile> record_files(const DiskStore& store, const std::string& function) {
  std::vector<RecordFile> files;
  for (const auto& [name, dir] : function_dirs(store, function)) {
    const std::optional<std::string> refused = refusal(store, name);
    std::vector<fs::path> paths;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".json") paths.push_back(entry.path());
    }
    std::sort(paths.begin(), paths.end());
    for (fs::path& path : paths) files.push_back({name, std::move(path), refused});
  }
  return files;
}

// The record of `file`, or why the engine would not use it.
RecordRead read_listed(const RecordFile& file) {
  if (file.refused) return {std::nullopt, "the engine refuses its directory: " + *file.refused};
  return disttune::read_record(file.path);
}

const std::string& best_config(const Record& record) {
  return record.candidates.at(record.best_index).config;
}

int run_list(const DiskStore& store, const std::string& function) {
  for (const RecordFile& file : record_files(store, function)) {
    const RecordRead read = read_listed(file);
    if (!read.record) {
      std::cout << "BAD " << file.function << "/" << file.path.filename().string() << ": "
                << read.error << '\n';
      continue;
    }
    const Record& record = *read.record;
    std::cout << record.id.function_name << "  " << record.id.file_id().substr(0, 12) << "  key "
              << record.id.key << "  best " << best_config(record) << "  ranks " << record.ranks
              << "  " << record.created_utc << '\n';
  }
  return 0;
}

// The record file that FILE_OR_ID names: a path, or a unique prefix of a file id.
fs::path resolve_record(const DiskStore& store, const std::string& file_or_id) {
  static const std::regex id_prefix("[0-9a-f]{1,64}");
  if (!std::regex_match(file_or_id, id_prefix)) {
    std::error_code error;
    if (fs::symlink_status(file_or_id, error).type() == fs::file_type::not_found) {
      throw CliError("'" + file_or_id + "' is neither a file nor a record id prefix");
    }
    return file_or_id;
  }
  std::vector<fs::path> matches;
  for (const RecordFile& file : record_files(store, "")) {
    if (file.path.filename().string().starts_with(file_or_id)) matches.push_back(file.path);
  }
  if (matches.empty()) throw CliError("no record id starts with '" + file_or_id + "'");
  if (matches.size() > 1) {
    std::string message = "record id prefix '" + file_or_id + "' is ambiguous; it matches:";
    for (const fs::path& path : matches) message += "\n  " + path.string();
    throw CliError(message);
  }
  return matches.front();
}

int run_show(const DiskStore& store, const std::string& file_or_id) {
  const fs::path path = resolve_record(store, file_or_id);
  const RecordRead read = disttune::read_record(path);
  if (!read.record) throw CliError("bad record " + path.string() + ": " + read.error);
  const Record& record = *read.record;

  disttune::TuningReport report;
  report.source = disttune::TuningReport::Source::disk;
  report.function = record.id.function_name;
  report.key = record.id.key;
  report.candidates = record.candidates;
  report.best = record.best_index;
  report.record_path = path;
  std::cout << disttune::format_table(report);
  const disttune::Measurement& m = record.measurement;
  std::cout << "  hardware: " << record.hardware.dump() << " (digest " << record.id.hardware_digest
            << ")\n"
            << "  deps: " << record.deps.dump() << '\n'
            << "  function digest: " << record.id.function_digest << '\n'
            << "  measurement: warmup_runs " << m.warmup_runs << ", timed_runs " << m.timed_runs
            << ", statistic " << disttune::to_string(m.statistic) << ", strategy " << m.strategy
            << ", flush_l2 " << (record.flush_l2 ? "true" : "false") << '\n'
            << "  ranks " << record.ranks << ", created " << record.created_utc
            << ", library " << record.library_version << '\n';
  return 0;
}

int run_verify(const DiskStore& store) {
  std::size_t bad = 0;
  const std::vector<RecordFile> files = record_files(store, "");
  for (const RecordFile& file : files) {
    const RecordRead read = read_listed(file);
    if (read.record) continue;
    ++bad;
    std::cout << "BAD " << file.path.string() << ": " << read.error << '\n';
  }
  std::cout << files.size() << " record files checked, " << files.size() - bad << " good, " << bad
            << " bad\n";
  return bad == 0 ? 0 : 1;
}

// "<number><unit>" (s, m, h or d) as a duration, e.g. "30d", "12h".
std::chrono::seconds parse_age(const std::string& text) {
  static const std::regex age("([0-9]{1,9})([smhd])");
  std::smatch parts;
  if (!std::regex_match(text, parts, age)) {
    throw CliError("--older-than takes a number and a unit (s, m, h or d), e.g. 30d; got '" +
                   text + "'");
  }
  const long long count = std::stoll(parts[1].str());
  const char unit = parts[2].str()[0];
  const long long scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400;
  return std::chrono::seconds(count * scale);
}

// When the entry itself (not what a link names) was last modified.
std::chrono::system_clock::time_point modified(const fs::path& path) {
  struct stat status {};
  if (lstat(path.c_str(), &status) != 0) {
    throw CliError("cannot inspect " + path.string() + ": " + std::strerror(errno));
  }
  return std::chrono::system_clock::from_time_t(status.st_mtime);
}

// Removes cache entries; with `older_than` above zero, only those modified longer ago.
int run_clear(const DiskStore& store, const std::string& function, bool yes,
              std::chrono::seconds older_than) {
  if (!yes) {
    throw CliError("clear removes records; refusing without --yes");
  }
  // Records, the kept previous records, temporary files, the entries moved aside (files,
  // links, directories, sockets: whatever was at a record's name) and the tuning logs.
  static const std::regex cache_file("[0-9a-f]{64}\\.(json(\\..+)?|bad-.+|log-.+)");
  const auto now = std::chrono::system_clock::now();
  std::size_t total = 0;
  for (const auto& [name, dir] : function_dirs(store, function)) {
    std::size_t removed = 0;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
      if (!std::regex_match(entry.path().filename().string(), cache_file)) continue;
      if (older_than.count() > 0 && now - modified(entry.path()) < older_than) continue;
      std::error_code error;
      // remove_all never follows a symbolic link; it removes a directory with its content.
      if (fs::remove_all(entry.path(), error) == static_cast<std::uintmax_t>(-1) || error) {
        throw CliError("cannot remove " + entry.path().string() + ": " + error.message());
      }
      ++removed;
    }
    std::error_code not_empty;  // other files stay, and so does their directory
    fs::remove(dir, not_empty);
    std::cout << "removed " << removed << " files of " << name << '\n';
    total += removed;
  }
  std::cout << "removed " << total << " files in all\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"disttune: inspect and clear the disk cache of tuning records"};
  app.require_subcommand(1);
  app.fallthrough();
  std::string root;
  app.add_option("--root", root, "cache root (default: TRITON_DIST_AUTOTUNE_CACHE_DIR or " +
                                 std::string(disttune::kDefaultCacheRoot) + ")");

  std::string function;
  std::string file_or_id;
  bool yes = false;
  CLI::App* list = app.add_subcommand("list", "one line per record (bad ones as BAD)");
  list->add_option("function", function, "only this function's records");
  CLI::App* show = app.add_subcommand("show", "one record as a table, with its fingerprints");
  show->add_option("file_or_id", file_or_id, "a record file or a unique prefix of its id")
      ->required();
  CLI::App* verify =
      app.add_subcommand("verify", "check that every record file is a valid schema-1 record");
  CLI::App* clear = app.add_subcommand("clear", "remove the records and logs of one function or all");
  clear->add_option("function", function, "only this function's files");
  clear->add_flag("--yes", yes, "really remove them");
  std::string older_than;
  clear->add_option("--older-than", older_than,
                    "only entries last modified longer ago than this, e.g. 30d, 12h, 90m, 45s");

  CLI11_PARSE(app, argc, argv);
  try {
    const DiskStore store(root.empty() ? disttune::default_cache_root() : fs::path(root));
    if (list->parsed()) return run_list(store, function);
    if (show->parsed()) return run_show(store, file_or_id);
    if (verify->parsed()) return run_verify(store);
    if (clear->parsed()) {
      return run_clear(store, function, yes,
                       older_than.empty() ? std::chrono::seconds(0) : parse_age(older_than));
    }
  } catch (const std::exception& error) {
    std::cerr << "disttune: error: " << error.what() << '\n';
  }
  return 1;
}
