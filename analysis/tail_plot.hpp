// The latency tail plot shared by the run report and compare: the fraction of frames slower than each
// latency on a log scale (p99 at 10^-2, p99.9 at 10^-3), with the confidence band of every quantile.
#pragma once

#include <string>
#include <vector>

#include "svg.hpp"

namespace framesim::analysis {

/// The tail of ascending `sorted` latencies as a line, and its quantiles' confidence intervals as a band (an
/// interval open above is drawn to the largest sample). Nothing when empty.
void add_latency_tail(Plot& plot, const std::vector<double>& sorted, int colour, const std::string& label);
/// The lowest fraction the tail of `n` samples reaches, for the plot's y range.
double tail_floor(std::size_t n);

}  // namespace framesim::analysis
