// KeyMemo: a key's text built once and kept stable, configs noted per epoch, later epochs kept.
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "disttune/key_memo.hpp"

namespace disttune {
namespace {

using Key = std::tuple<int, std::string>;
using Memo = detail::KeyMemo<Key>;

TEST(KeyMemo, AKeysTextIsBuiltOnceAndStaysWhereItIs) {
  Memo memo;
  const Key key{4096, "fp16"};
  EXPECT_EQ(memo.find(key), nullptr);
  const std::string& text = memo.text(key, nullptr);
  EXPECT_EQ(text, canonical_json(describe(key)));
  const Memo::Entry* known = memo.find(key);
  ASSERT_NE(known, nullptr);
  EXPECT_EQ(known->text, &text);
  EXPECT_EQ(known->epoch, Memo::kNoConfig);  // no config read yet
  // Asked again (even without what find() gave), the same kept text; more keys move nothing.
  EXPECT_EQ(&memo.text(key, nullptr), &text);
  for (int m = 0; m < 40; ++m) (void)memo.text(Key{m, "bf16"}, nullptr);
  EXPECT_EQ(&memo.text(key, memo.find(key)), &text);
  EXPECT_EQ(text, canonical_json(describe(key)));
}

TEST(KeyMemo, AConfigIsNotedWithItsEpochAndAnOlderOneDoesNotReplaceANewerOne) {
  Memo memo;
  const Key key{1, "a"};
  const std::string& text = memo.text(key, nullptr);
  memo.note_config(key, text, 2, 5);
  EXPECT_EQ(memo.find(key)->config, 2u);
  EXPECT_EQ(memo.find(key)->epoch, 5u);
  memo.note_config(key, text, 1, 4);  // read before the epoch moved to 5: dropped
  EXPECT_EQ(memo.find(key)->config, 2u);
  EXPECT_EQ(memo.find(key)->epoch, 5u);
  memo.note_config(key, text, 0, 6);
  EXPECT_EQ(memo.find(key)->config, 0u);
  EXPECT_EQ(memo.find(key)->epoch, 6u);
  EXPECT_EQ(memo.find(key)->text, &text);
}

TEST(KeyMemo, AKeyWithoutTextKeepsNothing) {
  Memo memo;
  const Key bad{1, std::string("\xff\xfe", 2)};  // not UTF-8: canonical_json refuses it
  EXPECT_ANY_THROW((void)memo.text(bad, nullptr));
  EXPECT_EQ(memo.find(bad), nullptr);
}

}  // namespace
}  // namespace disttune
