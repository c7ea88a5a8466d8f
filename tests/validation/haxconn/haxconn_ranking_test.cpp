// HaX-CoNN's published multi-DNN comparison on a Jetson AGX Xavier (published.csv; tests/validation/README.md,
// "HaX-CoNN multi-DNN ranking") against framesim on the shipped Xavier file and networks, with nothing fitted to
// these figures. Per pair, each placement (both on the GPU, one network per accelerator, HaX-CoNN's published
// layer split) is simulated; its time until both networks finish (median over the counted frames) is printed
// beside the published one with the error. The oracle is the measured RANKING: for the three pairwise orderings
// of a pair, the test counts how many framesim reproduces and asserts that count is the row's `concordant`
// (a ratchet: a model change that breaks a reproduced ordering fails, and so does one that fixes a divergent
// ordering until the row is raised). Absolute agreement is NOT claimed (the README gives the errors and why).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "core/files.hpp"
#include "engine/run_support.hpp"
#include "test_support.hpp"

using framesim::testing::read_table;
using framesim::testing::run_framesim;
using framesim::testing::Scratch;
using framesim::testing::source_path;

namespace {

/// Median, over the frames counted after the warm-up, of capture -> both networks done (the `done` stage).
double both_done_ms(const framesim::testing::RunResult& r) {
  std::vector<double> v;
  for (const auto& row : r.frames.where("counted", "1"))
    if (row.at("outcome") == "completed") v.push_back(std::stod(row.at("latency_s")) * 1e3);
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST(Validation, HaxConnPlacementRankingOnAgxXavier) {
  const auto published = read_table(source_path("tests/validation/haxconn/published.csv"));
  ASSERT_EQ(published.rows.size(), 2u);
  const std::array<std::string, 3> placement{"gpu_only", "gpu_dla", "haxconn"};
  Scratch s;
  for (const auto& row : published.rows) {
    const std::string pair = row.at("pair");
    std::array<double, 3> measured{}, predicted{};
    for (std::size_t p = 0; p < 3; ++p) {
      measured[p] = std::stod(row.at(placement[p] + "_ms"));
      const auto r = run_framesim(source_path("tests/validation/haxconn/" + pair + "_" + placement[p] + ".yaml"),
                                  s.dir() / (pair + placement[p]));
      ASSERT_EQ(r.exit_code, 0) << r.output;
      predicted[p] = both_done_ms(r);
      ASSERT_GT(predicted[p], 0) << pair << " " << placement[p] << ": no counted frame";
      std::printf("%-18s %-8s published %6.2f ms  framesim %6.2f ms  error %+6.1f %%\n", pair.c_str(),
                  placement[p].c_str(), measured[p], predicted[p], (predicted[p] / measured[p] - 1) * 100);
    }
    int concordant = 0;
    for (std::size_t a = 0; a < 3; ++a)
      for (std::size_t b = a + 1; b < 3; ++b) {
        const bool same = (measured[a] < measured[b]) == (predicted[a] < predicted[b]);
        concordant += same ? 1 : 0;
        std::printf("  %s vs %s: published %s, framesim %s%s\n", placement[a].c_str(), placement[b].c_str(),
                    measured[a] < measured[b] ? "<" : ">", predicted[a] < predicted[b] ? "<" : ">",
                    same ? "" : "  (diverges)");
      }
    // framesim map over the pair's space (PAIR.map.yaml, from the GPU-only scenario): HaX-CoNN's claim is that
    // a searched layer split beats both baselines in every pair; the search's winner must too, in fewer
    // simulations than the space has points.
    const auto out = s.dir() / (pair + "_map");
    const auto m = framesim::testing::run_cli(
        "map '" + source_path("tests/validation/haxconn/" + pair + "_gpu_only.yaml") + "' --space '" +
        source_path("tests/validation/haxconn/" + pair + ".map.yaml") + "' -o '" + out.string() + "'");
    ASSERT_EQ(m.exit_code, 0) << m.err;
    const auto map = nlohmann::json::parse(framesim::core::read_file(out / "map.json"));
    double best_ms = -1;
    std::string best;
    for (const auto& mapping : map.at("mappings"))
      if (mapping.at("index") == map.at("best")) {
        best_ms = mapping.at("metrics").at("p99_s").get<double>() * 1e3;
        best = mapping.at("mapping").get<std::string>();
      }
    std::printf("  map: best %s, %.2f ms (published HaX-CoNN %.2f ms), %d of %.0f mappings simulated\n", best.c_str(),
                best_ms, measured[2], map.at("simulations").get<int>(), map.at("space_size").get<double>());
    EXPECT_GT(best_ms, 0) << pair;
    EXPECT_LT(best_ms, std::min(predicted[0], predicted[1])) << pair << ": the searched split does not win";
    EXPECT_LT(map.at("simulations").get<double>(), map.at("space_size").get<double>());
    EXPECT_EQ(concordant, std::stoi(row.at("concordant")))
        << pair << ": the number of reproduced orderings changed; see README \"HaX-CoNN multi-DNN ranking\"";
  }
}
