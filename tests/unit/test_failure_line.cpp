// Tests of failure_line (report/failure_line.hpp): a failure's reason in the one line that lists show.
#include <gtest/gtest.h>

#include "report/failure_line.hpp"

namespace disttune {
namespace {

TEST(FailureLine, IsTheFirstLineOfASummarisedReason) {
  EXPECT_EQ(detail::failure_line("no such mode"), "no such mode");
  EXPECT_EQ(detail::failure_line("RuntimeError: bad mode (raised at k.py:3 in launch)\nTraceback (most recent "
                                 "call last):\n  File \"k.py\", line 3, in launch\nRuntimeError: bad mode\n"),
            "RuntimeError: bad mode (raised at k.py:3 in launch)");
}

TEST(FailureLine, IsTheExceptionLineOfABareTraceback) {
  // A Python failure no front end summarised (nanobind's text): the exception is last.
  EXPECT_EQ(detail::failure_line("Traceback (most recent call last):\n  File \"k.py\", line 3, in launch\n"
                                 "ValueError: block 2 is out of resources\n\n"),
            "ValueError: block 2 is out of resources");
  EXPECT_EQ(detail::failure_line(""), "");
}

}  // namespace
}  // namespace disttune
