// Test helpers for the disk store: a fresh temporary directory, a scoped environment
// variable and a sample record.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "disttune/store.hpp"

namespace disttune::testing {

/// A new, empty directory (mode 0700) under the system temp directory, removed with
/// everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "disttune-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Sets (or, with nullopt, unsets) an environment variable and restores it on destruction.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value) {
      setenv(name_.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// A finished tuning of four candidates: one ok (the best), one failed on this rank, one
/// the strategy never reached, one measured and then dropped by the strategy.
inline Record sample_record(const std::string& function_name = "scale",
                            const std::string& key = R"({"n":1024})") {
  Record record;
  record.id = {function_name, std::string(64, 'f'), std::string(64, 'a'), key};
  record.hardware = {{"cpu", {{"model", "Test CPU"}, {"cores", 8}}}};
  record.deps = {{"disttune", "0.1.0"}, {"compiler", "gcc 12.2.0"}};
  record.measurement.statistic = Statistic::mean;
  record.measurement.strategy = "exhaustive";
  record.flush_l2 = true;
  record.timer = "cuda";
  CandidateResult ok;
  ok.config = R"({"block":128,"ratio":0.25})";
  ok.samples = {1.5, 1.25, 1.75};
  ok.local_ms = 1.5;
  ok.agreed_ms = 1.625;
  ok.noise = 0.0625;
  ok.measured = true;
  CandidateResult failed;
  failed.config = R"({"block":256,"ratio":0.5})";
  failed.failed = true;
  failed.measured = true;
  failed.error = "out of resources";
  failed.local_ms = 0.0;
  failed.agreed_ms = std::numeric_limits<double>::infinity();
  CandidateResult skipped;
  skipped.config = R"({"block":512,"ratio":1.0})";
  CandidateResult dropped;
  dropped.config = R"({"block":64,"ratio":0.125})";
  dropped.samples = {9.5, 9.75};
  dropped.local_ms = 9.625;
  dropped.agreed_ms = 9.75;
  dropped.noise = 0.015625;
  dropped.measured = true;
  dropped.dropped = true;
  record.candidates = {ok, failed, skipped, dropped};
  record.best_index = 0;
  record.ranks = 2;
  record.created_utc = "2026-11-29T09:30:00Z";
  record.library_version = "0.1.0";
  return record;
}

/// The whole content of a file.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Writes `text` to `path`, replacing it.
inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

/// The names of the entries of a directory.
inline std::vector<std::string> entries(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

/// JSON text of `depth` nested lists around a 0: "[[...[0]...]]", built without recursion.
inline std::string nested_lists(std::size_t depth) {
  return std::string(depth, '[') + "0" + std::string(depth, ']');
}

/// The text of `record` with the value at `field` (a top-level member, or "config" of the
/// first candidate when `field` is "candidates[0].config") replaced by the raw JSON text
/// `raw`, which need not be valid.
inline std::string record_text_with(const Record& record, const std::string& field,
                                    const std::string& raw) {
  static const std::string kPlaceholder = "\"@@raw@@\"";
  Value json = record_to_json(record);
  if (field == "candidates[0].config") {
    json["candidates"][0]["config"] = "@@raw@@";
  } else {
    json[field] = "@@raw@@";
  }
  std::string text = json.dump();
  text.replace(text.find(kPlaceholder), kPlaceholder.size(), raw);
  return text;
}

}  // namespace disttune::testing
