// Tests of output checks and restored inputs of the C++ tuned function (output_check.hpp,
// AutotuneSpec::check and save_inputs), in the caller's process.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "disttune/autotune.hpp"

namespace disttune {
namespace {

struct Offset {
  int id;
  int at;  ///< the element this config gets wrong (-1: none)
};
Value describe(const Offset& c) { return c.id; }

using Vector = std::vector<int>;
using Tuned = Autotuned<Offset, int, Vector(int)>;

Tuned::Spec spec_of(std::vector<Offset> configs) {
  Tuned::Spec spec;
  spec.identity = {"offsets", "v1"};
  spec.configs = std::move(configs);
  spec.key = [](const int& n) { return n; };
  spec.launch = [](const Offset& c, int n) {
    Vector result(static_cast<std::size_t>(n), 1);
    if (c.at >= 0) result[static_cast<std::size_t>(c.at)] = 2;
    return result;
  };
  spec.options.measurement.strategy = "exhaustive";  // the run counts below are its
  spec.options.measurement.warmup_runs = 1;
  spec.options.measurement.timed_runs = 2;
  spec.options.disk_cache = false;
  return spec;
}

TEST(OutputCheck, AWrongResultFailsAndSaysWhere) {
  Tuned::Spec spec = spec_of({{0, 2}, {1, -1}});
  spec.check.reference = [](int n) { return Vector(static_cast<std::size_t>(n), 1); };
  Tuned tuned(std::move(spec));
  EXPECT_EQ(tuned(4), Vector(4, 1));
  const TuningReport report = *tuned.last_report();
  EXPECT_TRUE(report.candidates[0].failed);
  EXPECT_NE(report.candidates[0].error.find("differs from the reference: the result differs at element 2"),
            std::string::npos)
      << report.candidates[0].error;
  EXPECT_EQ(report.best, 1u);
}

TEST(OutputCheck, AConfigOfTheSpaceCanBeTheReferenceAndEqualDecides) {
  Tuned::Spec spec = spec_of({{0, 1}, {1, -1}, {2, 3}});
  spec.check.reference_config = 1;
  Tuned tuned(spec);
  tuned(4);
  std::vector<bool> failed;
  const TuningReport report = *tuned.last_report();
  for (const CandidateResult& c : report.candidates) failed.push_back(c.failed);
  EXPECT_EQ(failed, (std::vector<bool>{true, false, true}));

  spec.identity.name = "lenient";
  spec.check.equal = [](const Vector& result, const Vector& expected) { return result.size() == expected.size(); };
  Tuned lenient(std::move(spec));
  lenient(4);
  const TuningReport lenient_report = *lenient.last_report();
  for (const CandidateResult& c : lenient_report.candidates) EXPECT_FALSE(c.failed);
}

TEST(OutputCheck, EachCandidateIsCheckedOnceBeforeItsRuns) {
  Tuned::Spec spec = spec_of({{0, -1}, {1, -1}});
  int runs = 0;
  auto launch = spec.launch;
  spec.launch = [&runs, launch](const Offset& c, int n) {
    ++runs;
    return launch(c, n);
  };
  spec.check.reference_config = 0;
  Tuned tuned(std::move(spec));
  tuned(3);
  EXPECT_EQ(runs, 1 + 2 * (1 + 1 + 2) + 1);  // reference, per config (check, warm-up, 2 timed), final
}

TEST(OutputCheck, AReferenceOutsideTheSpaceIsAnError) {
  Tuned::Spec spec = spec_of({{0, -1}});
  spec.check.reference_config = 1;
  EXPECT_THROW(Tuned{spec}, std::invalid_argument);
}

TEST(RestoredInputs, EveryRunAndTheFinalRunSeeTheCallersInputs) {
  using InPlace = Autotuned<Offset, int, int(Vector*)>;
  InPlace::Spec spec;
  spec.identity = {"in_place", "v1"};
  spec.configs = {{0, -1}, {1, -1}};
  spec.key = [](Vector* const&) { return 0; };
  spec.options.measurement.strategy = "exhaustive";  // the spec's 5 + 10 runs counted below
  std::vector<int> seen;
  spec.launch = [&seen](const Offset&, Vector* out) {
    seen.push_back((*out)[0]);
    return ++(*out)[0];
  };
  spec.save_inputs = [](Vector* out) {
    return [out, saved = *out] { *out = saved; };
  };
  spec.options.disk_cache = false;
  InPlace tuned(std::move(spec));
  Vector out{7};
  EXPECT_EQ(tuned(&out), 8);
  EXPECT_EQ(seen.size(), 2u * (5 + 10) + 1);
  for (int value : seen) EXPECT_EQ(value, 7);
}

}  // namespace
}  // namespace disttune
