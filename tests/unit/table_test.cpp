// Terminal tables (analysis/table.cpp): the alignment a caller gives is kept; without one, names left, numbers
// right. The expected renderings are written out by hand (two spaces between columns, indent 0).
#include <gtest/gtest.h>

#include "table.hpp"

namespace {

using framesim::analysis::Table;

TEST(Table, WithoutAlignmentTheFirstColumnIsLeftAndTheRestRight) {
  Table t({"stage", "p99"});
  t.add({"isp", "1.5 ms"});
  t.add({"detector", "12 ms"});
  // Widths: "detector" 8, "1.5 ms" 6.
  EXPECT_EQ(t.render(0),
            "stage        p99\n"
            "isp       1.5 ms\n"
            "detector   12 ms\n");
}

TEST(Table, AGivenAlignmentIsKeptForTheFirstColumnToo) {
  // clang-tidy found the constructor testing the moved-from argument: every table got a left first column.
  Table t({"n", "name"}, {Table::Align::right, Table::Align::left});
  t.add({"7", "a"});
  t.add({"12", "bb"});
  // A line ends at its last character (no padding after the last column).
  EXPECT_EQ(t.render(0), " n  name\n 7  a\n12  bb\n");
}

}  // namespace
