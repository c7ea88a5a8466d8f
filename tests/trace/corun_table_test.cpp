// The co-run table reader (trace/corun.hpp): networks resolved against the table's folder, the measured unit's
// index, and the slowdown as together / alone latency or alone / together throughput.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.hpp"
#include "trace/corun.hpp"

using framesim::testing::Scratch;

TEST(CorunTable, LatenciesAndThroughputsGiveTheSlowdown) {
  Scratch s;
  std::filesystem::create_directories(s.dir() / "nets");
  s.write("nets/a.yaml", "name: a\n");
  s.write("nets/b.yaml", "name: b\n");
  const auto table = s.write("corun.csv",
                             "# comment\n"
                             "row,corun,unit,alone_latency,together_latency,alone_qps,together_qps\n"
                             "by_latency,gpu=nets/a.yaml; dla0=nets/b.yaml,dla0,2 ms,2.5 ms,,\n"
                             "by_qps,gpu=nets/a.yaml;dla0=nets/b.yaml,gpu,,,400,250\n");
  const auto t = framesim::trace::read_corun(table, {"gpu", "dla0"}, "hw.yaml");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].id, "by_latency");
  ASSERT_EQ(t.rows[0].members.size(), 2u);
  EXPECT_EQ(t.rows[0].members[1].unit, "dla0");
  EXPECT_EQ(t.rows[0].members[1].network, (s.dir() / "nets/b.yaml").lexically_normal());
  EXPECT_EQ(t.rows[0].measured, 1u);
  EXPECT_DOUBLE_EQ(t.rows[0].slowdown, 1.25);  // 2.5 ms / 2 ms
  EXPECT_EQ(t.rows[1].measured, 0u);
  EXPECT_DOUBLE_EQ(t.rows[1].slowdown, 1.6);  // 400 / 250 qps
}
