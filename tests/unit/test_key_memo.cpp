// KeyMemo: a key's text built once and kept stable, configs noted per epoch, later epochs kept.
#include <optional>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "disttune/key_memo.hpp"

namespace disttune {
namespace {

using Key = std::tuple<int, std::string>;
using Memo = detail::KeyMemo<Key>;

/// What the memo knows of `key`, if anything.
std::optional<Memo::Entry> known(const Memo& memo, const Key& key) {
  Memo::Entry entry;
  return memo.find(key, entry) ? std::optional<Memo::Entry>(entry) : std::nullopt;
}

TEST(KeyMemo, AKeysTextIsBuiltOnceAndStaysWhereItIs) {
  Memo memo;
  const Key key{4096, "fp16"};
  EXPECT_FALSE(known(memo, key));
  const std::string& text = memo.text(key, nullptr);
  EXPECT_EQ(text, canonical_json(describe(key)));
  const std::optional<Memo::Entry> entry = known(memo, key);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->text, &text);
  EXPECT_EQ(entry->epoch, Memo::kNoConfig);  // no config read yet
  // Asked again (even without what find() gave), the same kept text; more keys move nothing.
  EXPECT_EQ(&memo.text(key, nullptr), &text);
  for (int m = 0; m < 40; ++m) (void)memo.text(Key{m, "bf16"}, nullptr);
  const std::optional<Memo::Entry> again = known(memo, key);
  ASSERT_TRUE(again);
  EXPECT_EQ(&memo.text(key, &*again), &text);
  EXPECT_EQ(text, canonical_json(describe(key)));
}

TEST(KeyMemo, AConfigIsNotedWithItsEpochAndAnOlderOneDoesNotReplaceANewerOne) {
  Memo memo;
  const Key key{1, "a"};
  const std::string& text = memo.text(key, nullptr);
  memo.note_config(key, text, 2, 5);
  EXPECT_EQ(known(memo, key)->config, 2u);
  EXPECT_EQ(known(memo, key)->epoch, 5u);
  memo.note_config(key, text, 1, 4);  // read before the epoch moved to 5: dropped
  EXPECT_EQ(known(memo, key)->config, 2u);
  EXPECT_EQ(known(memo, key)->epoch, 5u);
  memo.note_config(key, text, 0, 6);
  EXPECT_EQ(known(memo, key)->config, 0u);
  EXPECT_EQ(known(memo, key)->epoch, 6u);
  EXPECT_EQ(known(memo, key)->text, &text);
}

TEST(KeyMemo, AKeyWithoutTextKeepsNothing) {
  Memo memo;
  const Key bad{1, std::string("\xff\xfe", 2)};  // not UTF-8: canonical_json refuses it
  EXPECT_ANY_THROW((void)memo.text(bad, nullptr));
  EXPECT_FALSE(known(memo, bad));
}

}  // namespace
}  // namespace disttune
