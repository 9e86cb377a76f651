// Tests of ParsedRecords: a file's parse is reused only while it holds the same bytes.
#include <gtest/gtest.h>

#include "store/parsed_records.hpp"
#include "store_test_support.hpp"

namespace disttune::detail {
namespace {

using testing::sample_record;

std::string bytes_of(int ranks) {
  Record record = sample_record();
  record.ranks = ranks;
  return canonical_json(record_to_json(record));
}

TEST(ParsedRecords, TheSameBytesGiveTheEarlierParseAtTheNextListing) {
  ParsedRecords parsed;
  const auto first = parsed.parse("d", "a.json", bytes_of(2));
  ASSERT_TRUE(first->record.has_value()) << first->error;
  EXPECT_EQ(first->record->ranks, 2);
  parsed.end_listing("d");
  const auto again = parsed.parse("d", "a.json", bytes_of(2));
  EXPECT_EQ(again, first);
  parsed.end_listing("d");
  EXPECT_EQ(parsed.parse("d", "a.json", bytes_of(2)), first);  // kept while listed
}

TEST(ParsedRecords, OtherBytesAreParsedAgain) {
  ParsedRecords parsed;
  const auto first = parsed.parse("d", "a.json", bytes_of(2));
  parsed.end_listing("d");
  const auto changed = parsed.parse("d", "a.json", bytes_of(4));
  EXPECT_NE(changed, first);
  ASSERT_TRUE(changed->record.has_value());
  EXPECT_EQ(changed->record->ranks, 4);
  EXPECT_EQ(first->record->ranks, 2);  // an earlier parse handed out stays as it was
}

TEST(ParsedRecords, AFileLeftOutOfAListingIsForgotten) {
  ParsedRecords parsed;
  const auto a = parsed.parse("d", "a.json", bytes_of(2));
  const auto b = parsed.parse("d", "b.json", bytes_of(2));
  parsed.end_listing("d");
  EXPECT_EQ(parsed.parse("d", "a.json", bytes_of(2)), a);
  parsed.end_listing("d");  // b was not read in this listing
  EXPECT_NE(parsed.parse("d", "b.json", bytes_of(2)), b);
  EXPECT_EQ(parsed.parse("d", "a.json", bytes_of(2)), a);
}

TEST(ParsedRecords, DirectoriesAreKeptApart) {
  ParsedRecords parsed;
  const auto in_d = parsed.parse("d", "a.json", bytes_of(2));
  parsed.end_listing("d");
  const auto in_e = parsed.parse("e", "a.json", bytes_of(2));
  EXPECT_NE(in_e, in_d);
  parsed.end_listing("e");
  EXPECT_EQ(parsed.parse("d", "a.json", bytes_of(2)), in_d);  // e's listing did not end d's
}

TEST(ParsedRecords, FilesPastTheByteBudgetAreParsedEveryTime) {
  ParsedRecords parsed;
  const std::string large(ParsedRecords::kMostRememberedBytes + 1, ' ');
  const auto first = parsed.parse("d", "large.json", large);
  const auto small = parsed.parse("d", "a.json", bytes_of(2));
  EXPECT_FALSE(first->record.has_value());
  parsed.end_listing("d");
  EXPECT_NE(parsed.parse("d", "large.json", large), first);  // not remembered: over the budget
  EXPECT_EQ(parsed.parse("d", "a.json", bytes_of(2)), small);
}

TEST(ParsedRecords, BadBytesAreAParseWithAReason) {
  ParsedRecords parsed;
  for (int listing = 0; listing < 2; ++listing) {
    const auto bad = parsed.parse("d", "a.json", "{\"schema\": 1, \"function\": ");
    EXPECT_FALSE(bad->record.has_value());
    EXPECT_FALSE(bad->error.empty());
    parsed.end_listing("d");
  }
}

}  // namespace
}  // namespace disttune::detail
