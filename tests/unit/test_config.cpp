// Tests of canonical JSON and digests (src/util/config.cpp).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "disttune/config.hpp"

namespace disttune {
namespace {

TEST(Config, MapKeyOrderNeverChangesTheText) {
  Value a = Value::object();
  a["block"] = 256;
  a["warps"] = 4;
  a["nested"] = {{"z", 1}, {"a", 2}};
  Value b = Value::object();
  b["nested"] = {{"a", 2}, {"z", 1}};
  b["warps"] = 4;
  b["block"] = 256;
  EXPECT_EQ(canonical_json(a), canonical_json(b));
  EXPECT_EQ(canonical_json(a), R"({"block":256,"nested":{"a":2,"z":1},"warps":4})");
  EXPECT_EQ(digest(a), digest(b));
}

TEST(Config, ValuesOfDifferentTypesDiffer) {
  EXPECT_NE(digest(Value(1)), digest(Value(1.0)));
  EXPECT_NE(digest(Value(1)), digest(Value("1")));
  EXPECT_NE(digest(Value(true)), digest(Value(1)));
  EXPECT_EQ(canonical_json(Value(0.1)), "0.1");
}

TEST(Config, NonFiniteFloatIsAnError) {
  EXPECT_THROW(canonical_json(Value(std::numeric_limits<double>::quiet_NaN())), std::invalid_argument);
  EXPECT_THROW(canonical_json(Value::array({1.0, std::numeric_limits<double>::infinity()})),
               std::invalid_argument);
}

// `depth` nested lists around a 0, built without recursion.
Value nested(std::size_t depth) {
  Value root = 0;
  Value* inner = &root;
  for (std::size_t i = 0; i < depth; ++i) {
    *inner = Value::array({0});
    inner = &(*inner)[0];
  }
  return root;
}

TEST(Config, NestingIsBoundedNotACrash) {
  EXPECT_EQ(canonical_json(nested(kMaxValueDepth)),
            std::string(kMaxValueDepth, '[') + "0" + std::string(kMaxValueDepth, ']'));
  EXPECT_THROW(canonical_json(nested(kMaxValueDepth + 1)), std::invalid_argument);
  try {
    digest(nested(100'000));
    ADD_FAILURE() << "a value nested 100,000 levels was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("nests deeper than 100 levels"), std::string::npos)
        << error.what();
  }
}

TEST(Config, Sha256MatchesKnownVector) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("").size(), 64u);
}

TEST(Config, DigestOfPartsSeparatesParts) {
  EXPECT_NE(digest_of_parts({"ab", "c"}), digest_of_parts({"a", "bc"}));
  EXPECT_EQ(digest_of_parts({"ab", "c"}), digest_of_parts({"ab", "c"}));
}

TEST(Config, DescribeBuildsListsFromTuplesAndVectors) {
  const Value key = describe(std::make_tuple(std::vector<int>{4, 8}, std::string("f32"), 2.5, true));
  EXPECT_EQ(canonical_json(key), R"([[4,8],"f32",2.5,true])");
}

// The digest of a fixed value is a constant: the same in every process and on every machine.
// The value below is also computed in a child process to prove it does not depend on state.
TEST(Config, DigestIsStableAcrossProcesses) {
  const Value config = {{"BLOCK", 1024}, {"num_warps", 8}, {"dtype", "float16"}, {"alpha", 0.5}};
  const std::string here = digest(config);
  EXPECT_EQ(canonical_json(config), R"({"BLOCK":1024,"alpha":0.5,"dtype":"float16","num_warps":8})");
  EXPECT_EQ(here, sha256_hex(R"({"BLOCK":1024,"alpha":0.5,"dtype":"float16","num_warps":8})"));
  const std::string command =
      "printf '%s' '{\"BLOCK\":1024,\"alpha\":0.5,\"dtype\":\"float16\",\"num_warps\":8}' | sha256sum";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[128] = {};
  ASSERT_NE(fgets(buffer, sizeof buffer, pipe), nullptr);
  pclose(pipe);
  EXPECT_EQ(std::string(buffer).substr(0, 64), here);
}

}  // namespace
}  // namespace disttune
