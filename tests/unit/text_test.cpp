// The counting and article helpers every message uses: "1 warning", "2 warnings", "an energy".
#include <gtest/gtest.h>

#include "core/text.hpp"

using framesim::core::counted;
using framesim::core::with_article;

TEST(Text, CountedIsSingularOnlyForOne) {
  EXPECT_EQ(counted(0, "warning"), "0 warnings");
  EXPECT_EQ(counted(1, "warning"), "1 warning");
  EXPECT_EQ(counted(2, "job"), "2 jobs");
  EXPECT_EQ(counted(1, "entry", "entries"), "1 entry");
  EXPECT_EQ(counted(3, "entry", "entries"), "3 entries");
}

TEST(Text, ArticleByTheFirstLetter) {
  EXPECT_EQ(with_article("size"), "a size");
  EXPECT_EQ(with_article("energy per byte"), "an energy per byte");
  EXPECT_EQ(with_article("operation count"), "an operation count");
  EXPECT_EQ(with_article("time"), "a time");
}
