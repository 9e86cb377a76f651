// Tests of fingerprints: host facts, the timer's facts merged in, stable digests.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <stdexcept>
#include <thread>

#include "disttune/fingerprint.hpp"
#include "disttune/timer.hpp"

namespace disttune {
namespace {

// A timer that only reports device facts; it never times anything here.
class DeviceFactsTimer final : public Timer {
 public:
  DeviceFactsTimer(Value hardware, Value deps)
      : hardware_(std::move(hardware)), deps_(std::move(deps)) {}
  void start() override {}
  void stop() override {}
  std::vector<double> collect() override { return {}; }
  std::string name() const override { return "facts"; }
  Value hardware() const override { return hardware_; }
  Value deps() const override { return deps_; }

 private:
  Value hardware_;
  Value deps_;
};

TEST(Fingerprint, DescribesTheHostCpu) {
  const Fingerprint fingerprint = make_fingerprint(CpuTimer());
  const Value& cpu = fingerprint.hardware.at("cpu");
  EXPECT_EQ(cpu.at("cores"), std::thread::hardware_concurrency());
  ASSERT_TRUE(cpu.at("model").is_string());
  const std::string model = cpu.at("model");
  EXPECT_FALSE(model.empty());
  // Where /proc/cpuinfo names the model, it is that name.
  std::ifstream cpuinfo("/proc/cpuinfo");
  const std::regex model_line(R"(model name\s*:\s*(.*\S)\s*)");
  for (std::string line; std::getline(cpuinfo, line);) {
    std::smatch match;
    if (std::regex_match(line, match, model_line)) {
      EXPECT_EQ(model, match[1].str());
      break;
    }
  }
  EXPECT_EQ(fingerprint.hardware.size(), 1u);  // the CPU timer adds nothing
}

TEST(Fingerprint, NamesTheLibraryAndCompiler) {
  const Fingerprint fingerprint = make_fingerprint(CpuTimer());
  EXPECT_EQ(fingerprint.deps.at("disttune"), library_version());
  EXPECT_TRUE(std::regex_match(library_version(), std::regex(R"(\d+\.\d+\.\d+)")));
  const std::string compiler = fingerprint.deps.at("compiler");
  EXPECT_TRUE(std::regex_match(compiler, std::regex(R"((gcc|clang) \d+\.\d+\.\d+)"))) << compiler;
}

TEST(Fingerprint, MergesTheTimersFactsUnderTheirKeys) {
  const DeviceFactsTimer timer({{"cuda", {{"name", "NVIDIA H200"}, {"memory_mib", 143771}}}},
                               {{"cuda_driver", "12.4"}});
  const Fingerprint fingerprint = make_fingerprint(timer);
  EXPECT_EQ(fingerprint.hardware.at("cuda").at("name"), "NVIDIA H200");
  EXPECT_TRUE(fingerprint.hardware.contains("cpu"));
  EXPECT_EQ(fingerprint.deps.at("cuda_driver"), "12.4");
  EXPECT_TRUE(fingerprint.deps.contains("disttune"));
  EXPECT_NE(fingerprint.hardware_digest(), make_fingerprint(CpuTimer()).hardware_digest());
  EXPECT_NE(fingerprint.deps_digest(), make_fingerprint(CpuTimer()).deps_digest());
}

TEST(Fingerprint, DigestsAreStableAndSeparate) {
  const Fingerprint a = make_fingerprint(CpuTimer());
  const Fingerprint b = make_fingerprint(CpuTimer());
  EXPECT_EQ(a.hardware_digest(), b.hardware_digest());
  EXPECT_EQ(a.deps_digest(), b.deps_digest());
  EXPECT_EQ(a.hardware_digest(), digest(a.hardware));
  EXPECT_EQ(a.deps_digest(), digest(a.deps));
  // A dependency change does not change the hardware digest (records stay found; the
  // mismatch is reported instead).
  const DeviceFactsTimer newer_driver(Value::object(), {{"cuda_driver", "12.5"}});
  EXPECT_EQ(make_fingerprint(newer_driver).hardware_digest(), a.hardware_digest());
}

TEST(Fingerprint, RejectsTimerFactsThatAreNotObjects) {
  EXPECT_THROW(make_fingerprint(DeviceFactsTimer(Value::array({1}), Value::object())),
               std::invalid_argument);
  EXPECT_THROW(make_fingerprint(DeviceFactsTimer(Value::object(), "12.4")), std::invalid_argument);
}

}  // namespace
}  // namespace disttune
