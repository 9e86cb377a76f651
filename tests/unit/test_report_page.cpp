// Tests of the HTML report page (cli/report_page.hpp): its plot keeps every axis label and a scale one outlier cannot squeeze.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/report_page.hpp"
#include "store_test_support.hpp"

namespace disttune {
namespace {

CandidateResult measured(const std::string& config, std::vector<double> samples, double agreed_ms) {
  CandidateResult candidate;
  candidate.config = config;
  candidate.samples = std::move(samples);
  candidate.local_ms = agreed_ms;
  candidate.agreed_ms = agreed_ms;
  candidate.measured = true;
  return candidate;
}

/// The page of one record whose candidates are `candidates` (the first chosen).
std::string page_of(std::vector<CandidateResult> candidates) {
  Record record = testing::sample_record();
  record.candidates = std::move(candidates);
  record.best_index = 0;
  cli::ListedRecord listed;
  listed.file.function = "scale";
  listed.file.path = "/cache/scale/" + record.id.file_id() + ".json";
  listed.read.record = record;
  return cli::report_page("/cache", {listed});
}

TEST(ReportPage, TheLastAxisLabelHasRoomRightOfThePlot) {
  const std::string html = page_of({measured(R"({"a":1})", {1.0, 1.1}, 1.0), measured(R"({"a":2})", {2.0}, 2.0)});
  // The plot spans x 360..880; the last tick's label is centred on 880, with 60 px to its right.
  EXPECT_NE(html.find(R"(<svg xmlns="http://www.w3.org/2000/svg" width="940")"), std::string::npos) << html;
  EXPECT_NE(html.find(R"(<text class="tick" x="880.0" y="60" font-size="10" text-anchor="middle">2.1 ms</text>)"),
            std::string::npos)
      << html;
}

TEST(ReportPage, OneOutlierGoesOffTheScaleInsteadOfSqueezingTheRest) {
  // One stalled run of 500 ms among runs of about 1 ms: the scale ends at 3 times the
  // median agreed time (1.3 ms), plus 5%.
  const std::string html = page_of({measured(R"({"a":1})", {1.0, 1.1, 0.9}, 1.0),
                                    measured(R"({"a":2})", {1.2, 500.0, 1.3}, 1.3),
                                    measured(R"({"a":3})", {1.5, 1.6}, 1.55)});
  // The chosen config's 1 ms bar is 127 px wide (520 px / 4.095 ms), not 1 px.
  EXPECT_NE(html.find(R"(width="127.0" height="12" fill="#2e8b57")"), std::string::npos) << html;
  EXPECT_NE(html.find(R"(text-anchor="end" font-size="10" fill="#b00000">off the scale: 500 ms &#x25B8;</text>)"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("off the scale", html.find("off the scale") + 1), std::string::npos) << html;  // that row only
  EXPECT_NE(html.find(R"(<circle cx="880.0")"), std::string::npos) << html;  // the outlier, at the plot's end
  EXPECT_NE(html.find(">4.095 ms</text>"), std::string::npos) << html;
}

}  // namespace
}  // namespace disttune
