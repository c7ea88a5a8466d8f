// The order-statistic interval of a quantile against the binomial by hand (binomial_by_hand.hpp: each tail
// summed term by term from C(n, k) p^k (1 - p)^(n - k)), and a textbook value.
#include <cmath>

#include <gtest/gtest.h>

#include "report/binomial_by_hand.hpp"
#include "stats.hpp"

using framesim::analysis::nearest_rank;
using framesim::analysis::quantile_rank_interval;

using framesim::testing::interval_ranks_by_hand;

TEST(Interval, MedianOfAHundredIsTheTextbookFortiethToSixtyFirst) {
  const auto r = quantile_rank_interval(100, 0.5);
  EXPECT_EQ(r.lower, 40u);
  EXPECT_EQ(r.upper, 61u);
}

TEST(Interval, RanksMatchTheBinomialByHand) {
  for (std::size_t n : {5u, 20u, 89u, 119u, 367u, 368u, 500u, 1000u, 2400u})
    for (double p : {0.5, 0.9, 0.99, 0.999}) {
      const auto r = quantile_rank_interval(n, p);
      const auto [lower, upper] = interval_ranks_by_hand(n, p);
      EXPECT_EQ(r.lower, lower) << "n " << n << " p " << p;
      EXPECT_EQ(r.upper, upper) << "n " << n << " p " << p;
    }
}

TEST(Interval, P99NeedsThreeHundredSixtyEightSamplesToBeBoundedAbove) {
  // 0.99^n <= 2.5 % first at n = 368 (0.99^367 = 0.02501).
  EXPECT_EQ(quantile_rank_interval(367, 0.99).upper, 368u);  // open: n + 1
  EXPECT_EQ(quantile_rank_interval(368, 0.99).upper, 368u);  // the largest sample
  EXPECT_EQ(nearest_rank(89, 0.99), 89u);                    // p99 of 89 frames is the maximum
  EXPECT_EQ(nearest_rank(119, 0.99), 118u);                  // of 119, the second largest
}
