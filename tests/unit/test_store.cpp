// Tests of the disk store: record format, atomic writes, and every refusal rule.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <regex>
#include <stdexcept>

#include "util/atomic_file.hpp"
#include "store/cache_dir.hpp"
#include "record/record_builder.hpp"
#include "disttune/store.hpp"
#include "store_test_support.hpp"

namespace disttune {
namespace {

namespace fs = std::filesystem;
using testing::entries;
using testing::read_file;
using testing::sample_record;
using testing::ScopedEnv;
using testing::TempDir;
using testing::write_file;

mode_t mode_of(const fs::path& path) {
  struct stat status {};
  EXPECT_EQ(lstat(path.c_str(), &status), 0) << path;
  return status.st_mode & 07777;
}

int count(const std::string& text, const std::string& part) {
  int found = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++found;
  return found;
}

// Entries of `dir` whose names start with `prefix` followed by more characters.
std::vector<std::string> entries_after(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> names;
  for (const auto& name : entries(dir)) {
    if (name.size() > prefix.size() && name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  return names;
}

// ---------------------------------------------------------------------------------------
// Record <-> JSON

TEST(RecordJson, RoundTripKeepsEveryField) {
  const Record record = sample_record();
  const Record back = record_from_json(record_to_json(record));
  EXPECT_EQ(back.id.function_name, "scale");
  EXPECT_EQ(back.id.function_digest, record.id.function_digest);
  EXPECT_EQ(back.id.hardware_digest, record.id.hardware_digest);
  EXPECT_EQ(back.id.key, record.id.key);
  EXPECT_EQ(back.hardware, record.hardware);
  EXPECT_EQ(back.deps, record.deps);
  EXPECT_EQ(back.measurement.warmup_runs, 5);
  EXPECT_EQ(back.measurement.timed_runs, 10);
  EXPECT_EQ(back.measurement.statistic, Statistic::mean);
  EXPECT_EQ(back.measurement.strategy, "exhaustive");
  EXPECT_TRUE(back.flush_l2);
  EXPECT_EQ(back.timer, "cuda");
  ASSERT_EQ(back.candidates.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const CandidateResult& a = record.candidates[i];
    const CandidateResult& b = back.candidates[i];
    EXPECT_EQ(b.config, a.config) << i;
    EXPECT_EQ(b.failed, a.failed) << i;
    EXPECT_EQ(b.measured, a.measured) << i;
    EXPECT_EQ(b.error, a.error) << i;
    EXPECT_EQ(b.samples, a.samples) << i;
    EXPECT_EQ(b.local_ms, a.local_ms) << i;
    EXPECT_EQ(b.agreed_ms, a.agreed_ms) << i;
    EXPECT_EQ(b.noise, a.noise) << i;
    EXPECT_EQ(b.dropped, a.dropped) << i;
  }
  EXPECT_TRUE(std::isinf(back.candidates[1].agreed_ms));
  EXPECT_EQ(back.best_index, 0u);
  EXPECT_EQ(back.ranks, 2);
  EXPECT_EQ(back.created_utc, "2026-11-29T09:30:00Z");
  EXPECT_EQ(back.library_version, "0.1.0");
}

TEST(RecordJson, FollowsTheDocumentedFormat) {
  const Value json = record_to_json(sample_record());
  EXPECT_EQ(json["schema"], "disttune.record");
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["function"]["name"], "scale");
  EXPECT_EQ(json["key"], R"({"n":1024})");
  EXPECT_EQ(json["measurement"]["statistic"], "mean");
  EXPECT_EQ(json["measurement"]["flush_l2"], true);
  EXPECT_EQ(json["measurement"]["timer"], "cuda");
  const Value& candidates = json["candidates"];
  EXPECT_EQ(candidates[0]["status"], "ok");
  EXPECT_EQ(candidates[0]["config"], Value::parse(R"({"block":128,"ratio":0.25})"));
  EXPECT_EQ(candidates[0]["samples_ms"], Value::parse("[1.5,1.25,1.75]"));
  EXPECT_EQ(candidates[1]["status"], "failed");
  EXPECT_EQ(candidates[1]["error"], "out of resources");
  EXPECT_TRUE(candidates[1]["agreed_ms"].is_null());
  EXPECT_EQ(candidates[2]["status"], "skipped");
  EXPECT_TRUE(candidates[2]["local_ms"].is_null());
  EXPECT_EQ(candidates[3]["status"], "dropped");
  EXPECT_EQ(candidates[3]["agreed_ms"], 9.75);
  EXPECT_EQ(candidates[0]["noise"], 0.0625);
  EXPECT_EQ(json["best"]["index"], 0);
  EXPECT_EQ(json["best"]["config"], candidates[0]["config"]);
  EXPECT_EQ(json["ranks"], 2);
}

TEST(RecordJson, RejectsRecordsItCannotWrite) {
  Record out_of_range = sample_record();
  out_of_range.best_index = 4;
  EXPECT_THROW(record_to_json(out_of_range), std::invalid_argument);
  Record no_time = sample_record();
  no_time.created_utc = "yesterday";
  EXPECT_THROW(record_to_json(no_time), std::invalid_argument);
  Record nan_sample = sample_record();
  nan_sample.candidates[0].samples.push_back(std::nan(""));
  EXPECT_THROW(record_to_json(nan_sample), std::invalid_argument);
  Record no_strategy = sample_record();
  no_strategy.measurement.strategy.clear();
  EXPECT_THROW(record_to_json(no_strategy), std::invalid_argument);
  Record not_json = sample_record();
  not_json.candidates[2].config = "{block";
  EXPECT_THROW(record_to_json(not_json), std::invalid_argument);
}

struct BadField {
  const char* name;
  std::function<void(Value&)> spoil;
  const char* field;  // must appear in the error
};

void PrintTo(const BadField& bad, std::ostream* out) {
  *out << bad.name;
}

class RecordFromJsonBad : public ::testing::TestWithParam<BadField> {};

TEST_P(RecordFromJsonBad, NamesTheField) {
  Value json = record_to_json(sample_record());
  GetParam().spoil(json);
  try {
    record_from_json(json);
    FAIL() << "accepted a record with a bad " << GetParam().field;
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(std::string("'") + GetParam().field + "'"),
              std::string::npos)
        << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fields, RecordFromJsonBad,
    ::testing::Values(
        BadField{"NotAnObject", [](Value& j) { j = Value::array(); }, "(record)"},
        BadField{"NoSchema", [](Value& j) { j.erase("schema"); }, "schema"},
        BadField{"ForeignSchema", [](Value& j) { j["schema"] = "kernel_tuner.cache"; }, "schema"},
        BadField{"NewerVersion", [](Value& j) { j["schema_version"] = 2; }, "schema_version"},
        BadField{"VersionAsText", [](Value& j) { j["schema_version"] = "1"; }, "schema_version"},
        BadField{"KeyNotText", [](Value& j) { j["key"] = 1024; }, "key"},
        BadField{"FunctionNotObject", [](Value& j) { j["function"] = "scale"; }, "function"},
        BadField{"NoDigest", [](Value& j) { j["function"].erase("digest"); }, "function.digest"},
        BadField{"HardwareNotObject", [](Value& j) { j["hardware"] = "x86"; }, "hardware"},
        BadField{"RanksFloat", [](Value& j) { j["ranks"] = 2.0; }, "ranks"},
        BadField{"RanksZero", [](Value& j) { j["ranks"] = 0; }, "ranks"},
        BadField{"TimedRunsZero", [](Value& j) { j["measurement"]["timed_runs"] = 0; },
                 "measurement.timed_runs"},
        BadField{"UnknownStatistic", [](Value& j) { j["measurement"]["statistic"] = "p90"; },
                 "measurement.statistic"},
        BadField{"EmptyStrategy", [](Value& j) { j["measurement"]["strategy"] = ""; },
                 "measurement.strategy"},
        BadField{"FlushNotBool", [](Value& j) { j["measurement"]["flush_l2"] = 1; },
                 "measurement.flush_l2"},
        BadField{"NoCandidates", [](Value& j) { j["candidates"] = Value::array(); }, "candidates"},
        BadField{"UnknownStatus", [](Value& j) { j["candidates"][1]["status"] = "great"; },
                 "candidates[1].status"},
        BadField{"SampleText", [](Value& j) { j["candidates"][0]["samples_ms"][2] = "1.0"; },
                 "candidates[0].samples_ms[2]"},
        BadField{"OkWithoutTime", [](Value& j) { j["candidates"][0]["agreed_ms"] = nullptr; },
                 "candidates[0].agreed_ms"},
        BadField{"SkippedWithTime", [](Value& j) { j["candidates"][2]["local_ms"] = 1.0; },
                 "candidates[2].local_ms"},
        BadField{"BestOutOfRange", [](Value& j) { j["best"]["index"] = 4; }, "best.index"},
        BadField{"BestNegative", [](Value& j) { j["best"]["index"] = -1; }, "best.index"},
        BadField{"BestFailed",
                 [](Value& j) {
                   j["best"] = {{"index", 1}, {"config", j["candidates"][1]["config"]}};
                 },
                 "best.index"},
        BadField{"BestDropped",
                 [](Value& j) {
                   j["best"] = {{"index", 3}, {"config", j["candidates"][3]["config"]}};
                 },
                 "best.index"},
        BadField{"NoNoise", [](Value& j) { j["candidates"][0].erase("noise"); },
                 "candidates[0].noise"},
        BadField{"NegativeNoise", [](Value& j) { j["candidates"][3]["noise"] = -0.5; },
                 "candidates[3].noise"},
        BadField{"DroppedWithoutTime", [](Value& j) { j["candidates"][3]["local_ms"] = nullptr; },
                 "candidates[3].local_ms"},
        BadField{"BestConfigDiffers",
                 [](Value& j) {
                   j["best"]["config"] = {{"block", 64}};
                 },
                 "best.config"},
        BadField{"BadTimestamp", [](Value& j) { j["created_utc"] = "2026-11-29 09:30"; },
                 "created_utc"}),
    [](const ::testing::TestParamInfo<BadField>& param_info) {
      return std::string(param_info.param.name);
    });

TEST(RecordId, FileIdIsTheDigestOfItsParts) {
  const RecordId id{"scale", "f1", "h1", R"({"n":1})"};
  EXPECT_EQ(id.file_id(), digest_of_parts({"f1", "h1", R"({"n":1})"}));
  EXPECT_TRUE(std::regex_match(id.file_id(), std::regex("[0-9a-f]{64}")));
  EXPECT_NE(id.file_id(), (RecordId{"scale", "f2", "h1", R"({"n":1})"}.file_id()));
  EXPECT_NE(id.file_id(), (RecordId{"scale", "f1", "h2", R"({"n":1})"}.file_id()));
  EXPECT_NE(id.file_id(), (RecordId{"scale", "f1", "h1", R"({"n":2})"}.file_id()));
  // The name is the directory, not part of the file name.
  EXPECT_EQ(id.file_id(), (RecordId{"other", "f1", "h1", R"({"n":1})"}.file_id()));
}

// ---------------------------------------------------------------------------------------
// The root

TEST(DefaultCacheRoot, ComesFromTheEnvironmentVariable) {
  TempDir temp;
  ScopedEnv root("TRITON_DIST_AUTOTUNE_CACHE_DIR", (temp.path() / "here").string());
  EXPECT_EQ(default_cache_root(), temp.path() / "here");
  EXPECT_EQ(DiskStore().root(), temp.path() / "here");
}

TEST(DefaultCacheRoot, IsUnderHomeOtherwise) {
  ScopedEnv root("TRITON_DIST_AUTOTUNE_CACHE_DIR", std::nullopt);
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(default_cache_root(), fs::path("/home/someone/.triton_dist/autotune"));
  ScopedEnv empty("TRITON_DIST_AUTOTUNE_CACHE_DIR", "");
  EXPECT_EQ(default_cache_root(), fs::path("/home/someone/.triton_dist/autotune"));
}

TEST(DefaultCacheRoot, MakesARelativeRootAbsolute) {
  ScopedEnv root("TRITON_DIST_AUTOTUNE_CACHE_DIR", "relative/cache");
  EXPECT_EQ(default_cache_root(), fs::current_path() / "relative/cache");
}

TEST(DiskStoreEnv, SavesUnderTheEnvironmentRoot) {
  TempDir temp;
  ScopedEnv root("TRITON_DIST_AUTOTUNE_CACHE_DIR", (temp.path() / "env-root").string());
  const DiskStore store;
  const auto path = store.save(sample_record());
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(path->parent_path(), temp.path() / "env-root" / "scale");
  EXPECT_TRUE(store.load(sample_record().id).has_value());
}

// ---------------------------------------------------------------------------------------
// DiskStore

class DiskStoreTest : public ::testing::Test {
 protected:
  fs::path root() const { return temp_.path() / "cache"; }
  fs::path record_file(const Record& record) const { return store_.record_path(record.id); }

  TempDir temp_;
  DiskStore store_{temp_.path() / "cache"};
};

TEST_F(DiskStoreTest, LaysOutRecordsByFunctionAndDigest) {
  const Record record = sample_record();
  EXPECT_EQ(store_.function_dir("scale"), root() / "scale");
  const fs::path path = store_.record_path(record.id);
  EXPECT_EQ(path.parent_path(), root() / "scale");
  EXPECT_EQ(path.filename().string(), record.id.file_id() + ".json");
  EXPECT_TRUE(std::regex_match(path.filename().string(), std::regex("[0-9a-f]{64}\\.json")));
}

TEST_F(DiskStoreTest, RejectsUnsafeFunctionNames) {
  for (const char* name : {"", ".", "..", "../etc", ".hidden", "a/b", "a b", "a\\b", "é"}) {
    EXPECT_THROW(store_.function_dir(name), std::invalid_argument) << name;
  }
  EXPECT_NO_THROW(store_.function_dir("Scale_v2-fp16.x"));
  Record record = sample_record();
  record.id.function_name = "../escape";
  EXPECT_THROW(store_.load(record.id), std::invalid_argument);
  EXPECT_THROW(store_.save(record), std::invalid_argument);
  EXPECT_FALSE(fs::exists(temp_.path() / "escape"));
}

TEST_F(DiskStoreTest, SavedRecordLoadsBackWithSafeModes) {
  const Record record = sample_record();
  const auto path = store_.save(record);
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(*path, record_file(record));
  EXPECT_EQ(mode_of(root()), 0700u);
  EXPECT_EQ(mode_of(root() / "scale"), 0700u);
  EXPECT_EQ(mode_of(*path), 0600u);
  EXPECT_EQ(entries(root() / "scale"), std::vector<std::string>{path->filename().string()});

  const auto loaded = store_.load(record.id);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(record_to_json(*loaded), record_to_json(record));
  // The file is the documented JSON.
  EXPECT_EQ(Value::parse(read_file(*path)), record_to_json(record));
}

TEST_F(DiskStoreTest, CreatesMissingParentsOfTheRoot) {
  const DiskStore deep(temp_.path() / "a" / "b" / "cache");
  ASSERT_TRUE(deep.save(sample_record()).has_value());
  EXPECT_EQ(mode_of(temp_.path() / "a"), 0700u);
  EXPECT_EQ(mode_of(temp_.path() / "a" / "b" / "cache"), 0700u);
}

TEST_F(DiskStoreTest, SaveRefusesARecordTheBuilderDidNotStamp) {
  Record record = sample_record();
  record.created_utc.clear();
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store_.save(record).has_value());
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("the record is not stamped"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(store_.record_path(record.id)));
}

TEST(RecordBuilderTest, StampsTimeAndVersionOnce) {
  const Record sample = sample_record();
  detail::TuningOutcome outcome;
  outcome.measurement = sample.measurement;
  outcome.candidates = sample.candidates;
  outcome.best = sample.best_index;
  Fingerprint fingerprint;
  fingerprint.hardware = sample.hardware;
  const Record built = detail::build_record(sample.id, fingerprint, outcome);
  EXPECT_TRUE(
      std::regex_match(built.created_utc, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_EQ(built.library_version, library_version());
  EXPECT_EQ(record_from_json(record_to_json(built)).created_utc, built.created_utc);
}

TEST_F(DiskStoreTest, AbsentRecordIsASilentMissThatCreatesNothing) {
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store_.load(sample_record().id).has_value());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(fs::exists(root()));
  ASSERT_TRUE(store_.save(sample_record("other")).has_value());
  EXPECT_FALSE(store_.load(sample_record().id).has_value());
  EXPECT_FALSE(fs::exists(root() / "scale"));
}

TEST_F(DiskStoreTest, UsableFunctionDirIsCreatedPrivate) {
  const auto dir = store_.usable_function_dir("scale");
  ASSERT_TRUE(dir.has_value());
  EXPECT_EQ(*dir, root() / "scale");
  EXPECT_EQ(mode_of(*dir), 0700u);
}

TEST_F(DiskStoreTest, ReplacingARecordKeepsTheOldOne) {
  Record first = sample_record();
  first.ranks = 2;
  Record second = first;
  second.ranks = 4;
  Record third = first;
  third.ranks = 8;
  ASSERT_TRUE(store_.save(first).has_value());
  ASSERT_TRUE(store_.save(second).has_value());
  ASSERT_TRUE(store_.save(third).has_value());
  EXPECT_EQ(store_.load(first.id)->ranks, 8);

  const std::string name = record_file(first).filename().string();
  const auto kept = entries_after(root() / "scale", name + ".");
  ASSERT_EQ(kept.size(), 2u);
  std::vector<int> ranks;
  for (const auto& backup : kept) {
    EXPECT_TRUE(std::regex_match(backup, std::regex(name + R"(\.\d{8}T\d{6}\.\d{6}Z(-\d+)?)")))
        << backup;
    EXPECT_EQ(mode_of(root() / "scale" / backup), 0600u);
    ranks.push_back(record_from_json(Value::parse(read_file(root() / "scale" / backup))).ranks);
  }
  std::sort(ranks.begin(), ranks.end());
  EXPECT_EQ(ranks, (std::vector<int>{2, 4}));
  EXPECT_EQ(entries(root() / "scale").size(), 3u);  // the record and two kept ones, no temp files
}

// A warm start lists the records at every new key; the listing reuses the parse of a file
// whose bytes did not change, and must still see every change made between listings.
TEST_F(DiskStoreTest, RecordsOfSeesEveryChangeSinceTheLastListing) {
  const std::string function_digest(64, 'f'), hardware_digest(64, 'a');
  const auto listed = [&] {
    std::map<std::string, int> ranks_by_key;
    for (const Record& record : store_.records_of(RecordId{"scale", function_digest, hardware_digest, ""}, 16, {})) {
      ranks_by_key[record.id.key] = record.ranks;
    }
    return ranks_by_key;
  };
  std::vector<Record> records;
  for (int n = 1; n <= 3; ++n) {
    records.push_back(sample_record("scale", "{\"n\":" + std::to_string(n) + "}"));
    records.back().ranks = 2;
    ASSERT_TRUE(store_.save(records.back()).has_value());
  }
  EXPECT_EQ(listed(), (std::map<std::string, int>{{"{\"n\":1}", 2}, {"{\"n\":2}", 2}, {"{\"n\":3}", 2}}));
  EXPECT_EQ(listed(), (std::map<std::string, int>{{"{\"n\":1}", 2}, {"{\"n\":2}", 2}, {"{\"n\":3}", 2}}));

  records[1].ranks = 4;  // replaced: same name, same size
  ASSERT_TRUE(store_.save(records[1]).has_value());
  fs::remove(record_file(records[2]));
  write_file(record_file(records[0]), "{\"schema\": 1,");  // now unreadable: skipped, left in place
  EXPECT_EQ(listed(), (std::map<std::string, int>{{"{\"n\":2}", 4}}));
  EXPECT_TRUE(fs::exists(record_file(records[0])));

  ASSERT_TRUE(store_.save(records[0]).has_value());  // the same bytes it had at the first listing
  EXPECT_EQ(listed(), (std::map<std::string, int>{{"{\"n\":1}", 2}, {"{\"n\":2}", 4}}));
}

// tests/unit/data/record_schema1.json was written outside this build (by Python's json
// module, byte-identical to the store's output), with its name computed there too.
TEST_F(DiskStoreTest, ReadsARecordWrittenByAnotherBuild) {
  const std::string golden =
      read_file(fs::path(DISTTUNE_TEST_DATA_DIR) / "record_schema1.json");
  ASSERT_FALSE(golden.empty());
  const RecordId id{"scale", "1c78b4f6057af754c6812b6b370d6702a17edf4089bb04fecc74ac8fcbb76c1d",
                    "1616e1b1a455c54dc62ff2de6441ca92e130439c9733799e46114bd3b0029312",
                    R"({"n":1048576})"};
  EXPECT_EQ(id.file_id(), "ebbd6d07b34157477a1d8eb100b1c978cb2a1d35033d912ea06ff4bcaaadeee9");
  ASSERT_TRUE(store_.usable_function_dir("scale").has_value());
  write_file(store_.record_path(id), golden);

  const auto record = store_.load(id);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(digest(record->hardware), id.hardware_digest);
  EXPECT_EQ(record->best_index, 1u);
  EXPECT_EQ(record->candidates[1].config, R"({"block":4096,"threads":4})");
  EXPECT_EQ(record->candidates[1].samples.size(), 10u);
  EXPECT_EQ(record->candidates[1].agreed_ms, 0.301);
  EXPECT_TRUE(record->candidates[2].failed);
  EXPECT_TRUE(std::isinf(record->candidates[2].agreed_ms));
  EXPECT_EQ(record->measurement.statistic, Statistic::median);
  EXPECT_EQ(record->timer, "");  // written before records named their timer
  EXPECT_EQ(record->created_utc, "2026-11-29T09:30:00Z");
  // This build writes the same bytes back.
  EXPECT_EQ(record_to_json(*record).dump(2) + "\n", golden);
}

// Records of converge tunings keep its parameters as the numbers older builds wrote (when they
// were Measurement fields); reading either gives the strategy's options as texts.
TEST(ConvergeRecord, AnOlderRecordReadsToTheOptionsOfANewOneWithTheSameSettings) {
  Value older = record_to_json(sample_record());
  older["measurement"] = Value::parse(R"({"budget_ms": 0.0, "flush_l2": true, "max_noise": 0.01,
      "min_time_ms": 0.5, "statistic": "mean", "strategy": "converge", "timed_runs": 10,
      "timer": "cuda", "warmup_runs": 5})");
  Record made = sample_record();
  made.measurement.strategy = "converge";
  made.measurement.strategy_options = {{"max_noise", "0.01"}, {"min_time_ms", "0.5"}, {"budget_ms", "0"}};
  EXPECT_EQ(record_to_json(made)["measurement"], older["measurement"]);  // the same fields, numbers

  const std::map<std::string, std::string> expected = made.measurement.strategy_options;
  EXPECT_EQ(record_from_json(older).measurement.strategy_options, expected);
  EXPECT_EQ(record_from_json(record_to_json(made)).measurement.strategy_options, expected);

  // Only what was given is written; the other options stay texts.
  made.measurement.strategy_options = {{"max_noise", "0.020"}, {"seed", "3"}};
  const Value written = record_to_json(made)["measurement"];
  EXPECT_EQ(written["max_noise"], 0.02);
  EXPECT_FALSE(written.contains("min_time_ms"));
  EXPECT_EQ(written["strategy_options"], Value::parse(R"({"seed": "3"})"));
  EXPECT_EQ(record_from_json(record_to_json(made)).measurement.strategy_options,
            (std::map<std::string, std::string>{{"max_noise", "0.02"}, {"seed", "3"}}));

  // Another strategy's options of these names (a search's race) stay in strategy_options.
  made.measurement.strategy = "search";
  EXPECT_FALSE(record_to_json(made)["measurement"].contains("max_noise"));
  EXPECT_EQ(record_from_json(record_to_json(made)).measurement.strategy_options, made.measurement.strategy_options);
}

// A file at the record's name that is not a usable record of it.
struct BadRecord {
  const char* name;
  std::function<std::string(const Record&)> content;
};

void PrintTo(const BadRecord& bad, std::ostream* out) {
  *out << bad.name;
}

class DiskStoreBadRecord : public DiskStoreTest, public ::testing::WithParamInterface<BadRecord> {};

TEST_P(DiskStoreBadRecord, IsAMissWarnedOnceAndMovedAside) {
  const Record record = sample_record();
  ASSERT_TRUE(store_.usable_function_dir("scale").has_value());
  const fs::path path = record_file(record);
  write_file(path, GetParam().content(record));

  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store_.load(record.id).has_value());
  EXPECT_FALSE(store_.load(record.id).has_value());
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(warnings, "disttune: ignoring cache record " + path.string()), 1) << warnings;
  EXPECT_EQ(count(warnings, "\n"), 1) << warnings;

  EXPECT_FALSE(fs::exists(path));
  const auto aside = entries_after(path.parent_path(), record.id.file_id() + ".bad-");
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(read_file(path.parent_path() / aside[0]), GetParam().content(record));

  // A good record then takes its place.
  ASSERT_TRUE(store_.save(record).has_value());
  EXPECT_TRUE(store_.load(record.id).has_value());
}

std::string dumped(const Value& json) {
  return json.dump(2);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, DiskStoreBadRecord,
    ::testing::Values(
        BadRecord{"Empty", [](const Record&) { return std::string(); }},
        BadRecord{"Truncated",
                  [](const Record& r) {
                    const std::string text = dumped(record_to_json(r));
                    return text.substr(0, text.size() / 2);
                  }},
        BadRecord{"Garbage",
                  [](const Record&) {
                    return std::string(
                        "\x7f"
                        "ELF\x02\x01\x01 garbage");
                  }},
        BadRecord{"Pickle", [](const Record&) { return std::string("\x80\x04\x95\x10\x00", 5); }},
        BadRecord{"WrongSchema",
                  [](const Record& r) {
                    Value json = record_to_json(r);
                    json["schema"] = "triton.autotune";
                    return dumped(json);
                  }},
        BadRecord{"WrongVersion",
                  [](const Record& r) {
                    Value json = record_to_json(r);
                    json["schema_version"] = 0;
                    return dumped(json);
                  }},
        BadRecord{"WrongType",
                  [](const Record& r) {
                    Value json = record_to_json(r);
                    json["candidates"][0]["samples_ms"] = "1.5 1.25";
                    return dumped(json);
                  }},
        BadRecord{"BestOutOfRange",
                  [](const Record& r) {
                    Value json = record_to_json(r);
                    json["best"]["index"] = 7;
                    return dumped(json);
                  }},
        BadRecord{"OtherKey",
                  [](const Record& r) {
                    Record other = r;
                    other.id.key = R"({"n":2048})";
                    return dumped(record_to_json(other));
                  }},
        BadRecord{"OtherHardware",
                  [](const Record& r) {
                    Record other = r;
                    other.id.hardware_digest = std::string(64, '0');
                    return dumped(record_to_json(other));
                  }},
        BadRecord{"OtherFunctionDigest",
                  [](const Record& r) {
                    Record other = r;
                    other.id.function_digest = std::string(64, '1');
                    return dumped(record_to_json(other));
                  }}),
    [](const ::testing::TestParamInfo<BadRecord>& param_info) {
      return std::string(param_info.param.name);
    });

TEST_F(DiskStoreTest, SymlinkedRecordIsNeverFollowed) {
  const Record record = sample_record();
  // A valid record elsewhere: following the link would make this a hit.
  const fs::path elsewhere = temp_.path() / "elsewhere.json";
  write_file(elsewhere, record_to_json(record).dump());
  ASSERT_TRUE(store_.usable_function_dir("scale").has_value());
  const fs::path path = record_file(record);
  fs::create_symlink(elsewhere, path);

  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store_.load(record.id).has_value());
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warnings.find("symbolic link"), std::string::npos) << warnings;
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(entries_after(path.parent_path(), record.id.file_id() + ".bad-").size(), 1u);
  EXPECT_EQ(read_file(elsewhere), record_to_json(record).dump());
}

TEST_F(DiskStoreTest, SavingOverASymlinkReplacesTheLinkNotItsTarget) {
  const Record record = sample_record();
  const fs::path target = temp_.path() / "target.txt";
  write_file(target, "precious");
  ASSERT_TRUE(store_.usable_function_dir("scale").has_value());
  fs::create_symlink(target, record_file(record));
  ASSERT_TRUE(store_.save(record).has_value());
  EXPECT_EQ(read_file(target), "precious");
  EXPECT_FALSE(fs::is_symlink(record_file(record)));
  EXPECT_TRUE(store_.load(record.id).has_value());
}

TEST_F(DiskStoreTest, DirectoryAtTheRecordNameIsAMiss) {
  const Record record = sample_record();
  ASSERT_TRUE(store_.usable_function_dir("scale").has_value());
  fs::create_directory(record_file(record));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store_.load(record.id).has_value());
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("not a regular file"), std::string::npos);
}

TEST_F(DiskStoreTest, OnlyTheHexNameIsRead) {
  const Record record = sample_record();
  ASSERT_TRUE(store_.usable_function_dir("scale").has_value());
  const std::string id = record.id.file_id();
  std::string upper = id;
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  const std::string text = record_to_json(record).dump();
  const std::vector<std::string> near_names = {upper + ".json",    id + ".JSON",
                                               id + ".json.bak",   id,
                                               "." + id + ".json", id + ".json.tmp-abc"};
  for (const auto& name : near_names) write_file(root() / "scale" / name, text);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store_.load(record.id).has_value());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(entries(root() / "scale").size(), near_names.size());  // none touched
}

// A directory the store must refuse: load and save miss, one warning, nothing written.
void expect_refused(const DiskStore& store, const fs::path& untouched, const std::string& reason) {
  const Record record = sample_record();
  const auto before = fs::exists(untouched) ? entries(untouched) : std::vector<std::string>{};
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(store.load(record.id).has_value());
  EXPECT_FALSE(store.save(record).has_value());
  EXPECT_FALSE(store.save(record).has_value());
  EXPECT_FALSE(store.usable_function_dir("scale").has_value());
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(warnings, "disttune: not using cache directory"), 1) << warnings;
  EXPECT_EQ(count(warnings, "\n"), 1) << warnings;
  EXPECT_NE(warnings.find(reason), std::string::npos) << warnings;
  if (fs::exists(untouched)) {
    EXPECT_EQ(entries(untouched), before);
  }
}

TEST_F(DiskStoreTest, SymlinkedFunctionDirectoryIsRefused) {
  const fs::path real = temp_.path() / "real";
  const DiskStore real_store(real);
  ASSERT_TRUE(real_store.save(sample_record()).has_value());
  fs::create_directories(root());
  fs::permissions(root(), fs::perms::owner_all);
  fs::create_directory_symlink(real / "scale", root() / "scale");
  expect_refused(store_, real / "scale", "symbolic link");
}

TEST_F(DiskStoreTest, SymlinkedRootIsRefused) {
  const fs::path real = temp_.path() / "real";
  const DiskStore real_store(real);
  ASSERT_TRUE(real_store.save(sample_record()).has_value());
  fs::create_directory_symlink(real, root());
  expect_refused(store_, real / "scale", "symbolic link");
}

TEST_F(DiskStoreTest, GroupWritableFunctionDirectoryIsRefused) {
  ASSERT_TRUE(store_.save(sample_record()).has_value());
  ASSERT_EQ(chmod((root() / "scale").c_str(), 0770), 0);
  expect_refused(store_, root() / "scale", "writable by group or others (mode 0770)");
}

TEST_F(DiskStoreTest, WorldWritableRootIsRefused) {
  fs::create_directories(root());
  ASSERT_EQ(chmod(root().c_str(), 0777), 0);
  expect_refused(store_, root(), "writable by group or others (mode 0777)");
}

TEST_F(DiskStoreTest, ForeignOwnedDirectoryIsRefused) {
  if (geteuid() == 0) {
    ASSERT_TRUE(store_.save(sample_record()).has_value());
    ASSERT_EQ(chown((root() / "scale").c_str(), 65534, 65534), 0);
    expect_refused(store_, root() / "scale", "owned by uid 65534");
  } else {
    // Not root: "/" belongs to another user (root) and is the nearest such directory.
    expect_refused(DiskStore("/"), "/", "owned by uid 0");
  }
}

// ---------------------------------------------------------------------------------------
// AtomicFile and CacheDir

TEST(AtomicFile, LeavesNothingWhenNotCommitted) {
  TempDir temp;
  const auto dir = detail::CacheDir::open(temp.path(), false);
  ASSERT_TRUE(dir.has_value());
  {
    detail::AtomicFile file(dir->fd(), "out.json");
    file.write("partial");
    EXPECT_EQ(mode_of(temp.path() / file.temp_name()), 0600u);
    EXPECT_EQ(entries(temp.path()).size(), 1u);
  }
  EXPECT_TRUE(entries(temp.path()).empty());
}

TEST(AtomicFile, CommitReplacesTheWholeFile) {
  TempDir temp;
  const auto dir = detail::CacheDir::open(temp.path(), false);
  ASSERT_TRUE(dir.has_value());
  write_file(temp.path() / "out.json", "old content that is longer");
  detail::AtomicFile file(dir->fd(), "out.json");
  file.write("new ");
  file.write("content");
  EXPECT_EQ(read_file(temp.path() / "out.json"), "old content that is longer");
  file.commit();
  EXPECT_EQ(read_file(temp.path() / "out.json"), "new content");
  EXPECT_EQ(entries(temp.path()), std::vector<std::string>{"out.json"});
  EXPECT_THROW(file.commit(), std::system_error);
}

TEST(AtomicFile, TwoWritersGetDistinctTemporaryFiles) {
  TempDir temp;
  const auto dir = detail::CacheDir::open(temp.path(), false);
  ASSERT_TRUE(dir.has_value());
  detail::AtomicFile a(dir->fd(), "out.json");
  detail::AtomicFile b(dir->fd(), "out.json");
  EXPECT_NE(a.temp_name(), b.temp_name());
  detail::AtomicFile moved(std::move(a));
  moved.write("a");
  moved.commit();
  b.write("b");
  b.commit();
  EXPECT_EQ(read_file(temp.path() / "out.json"), "b");
  EXPECT_EQ(entries(temp.path()).size(), 1u);
}

TEST(CacheDir, OpensOnlyWhatPassesTheChecks) {
  TempDir temp;
  EXPECT_FALSE(detail::CacheDir::open(temp.path() / "absent", false).has_value());
  const auto made = detail::CacheDir::open(temp.path() / "made", true);
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ(mode_of(temp.path() / "made"), 0700u);
  write_file(temp.path() / "file", "x");
  EXPECT_THROW(detail::CacheDir::open(temp.path() / "file", false), detail::CacheDirError);
  EXPECT_THROW(made->open_child("../file", false), detail::CacheDirError);
}

}  // namespace
}  // namespace disttune
