#include "budget_report.hpp"

#include <map>

#include <fmt/format.h>

#include "budget_names.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "table.hpp"

namespace framesim::analysis {

using core::format_bandwidth;
using core::format_bytes;
using core::format_number;
using core::format_ops;
using core::format_ops_rate;
using core::format_seconds;
using model::BudgetReport;
using model::LimitKind;

std::string limit_name(const model::KernelTime& t, const model::HardwareSpec& hw) {
  switch (t.limit) {
    case LimitKind::compute: return "compute";
    case LimitKind::memory: return hw.memory[static_cast<std::size_t>(t.limit_level)].name;
    case LimitKind::overhead: return "overhead";
  }
  return "?";
}

std::string overall_limit(const BudgetReport& r, const model::HardwareSpec& hw) {
  switch (r.limit) {
    case LimitKind::compute: return "compute-bound";
    case LimitKind::memory: return hw.memory[static_cast<std::size_t>(r.limit_level)].name + "-bound";
    case LimitKind::overhead: return "overhead-bound";
  }
  return "?";
}

const model::OperatingPoint& op_point(const BudgetReport& r, const model::HardwareSpec& hw) {
  return hw.units[r.unit].operating_points[r.run.operating_point];
}

std::string kernel_op(const model::Kernel& k, const model::NetworkSpec& net) {
  std::string out;
  for (int l : k.layers) {
    const auto& layer = net.layers[static_cast<std::size_t>(l)];
    out += (out.empty() ? "" : "+") + layer.op;
  }
  return out;
}

namespace {

std::string percent(double fraction, int digits = 3) { return format_number(fraction * 100.0, digits) + "%"; }

void machine_section(std::string& out, const BudgetReport& r, const model::HardwareSpec& hw) {
  const auto& unit = hw.units[r.unit];
  out += "1. The machine\n";
  Table roofs({"compute", "peak (bound)", "effective (estimate)", "efficiency"});
  for (const auto& roof : r.roofs) {
    roofs.add({std::string(model::precision_name(roof.precision)), format_ops_rate(roof.peak_ops_per_s),
               format_ops_rate(roof.effective_ops_per_s), format_number(unit.efficiency_for(roof.precision), 3)});
  }
  out += roofs.render(3);
  if (unit.has_efficiency_by_op()) {
    std::vector<std::string> parts;
    for (model::OpClass c : model::kAllOpClasses) {
      std::vector<std::string> per;
      for (const auto& roof : r.roofs)
        if (unit.efficiency_by_op[static_cast<std::size_t>(c)][roof.precision])
          per.push_back(fmt::format("{} {}", model::precision_name(roof.precision),
                                    format_number(unit.efficiency_for(roof.precision, c), 3)));
      if (!per.empty()) parts.push_back(fmt::format("{} ({})", model::op_class_name(c), fmt::join(per, ", ")));
    }
    out += fmt::format("   efficiency by op class (others: the precision's): {}\n", fmt::join(parts, "; "));
  }
  std::vector<std::string> header{"memory", "kind", "capacity", "peak (bound)", "effective (estimate)", "Little's cap"};
  for (const auto& roof : r.roofs) header.push_back("ridge " + std::string(model::precision_name(roof.precision)));
  Table levels(header);
  for (const auto& row : r.levels) {
    const auto& level = hw.memory[row.level];
    std::vector<std::string> cells{level.name + (level.shared() ? " (shared)" : ""),
                                   std::string(model::memory_kind_name(level.kind)),
                                   core::format_capacity(level.capacity_bytes),
                                   format_bandwidth(row.peak_Bps),
                                   format_bandwidth(row.effective_Bps),
                                   row.littles_cap_Bps ? format_bandwidth(*row.littles_cap_Bps) : "-"};
    for (const auto& [p, ridge] : row.ridge) cells.push_back(format_number(ridge, 4) + " op/B");
    levels.add(cells);
  }
  out += levels.render(3);
  if (r.sustained_power_W) {
    const auto& t = *hw.thermal;
    out += fmt::format("   sustained power envelope: {} ((trip {} C - ambient {} C) / {} C/W)\n",
                       core::format_watts(*r.sustained_power_W), format_number(t.trip_C), format_number(t.ambient_C),
                       format_number(t.resistance_K_per_W));
  }
  out += "\n";
}

void model_section(std::string& out, const BudgetReport& r, const model::HardwareSpec& hw,
                   const model::NetworkSpec& net) {
  out += "2. The model\n";
  out += fmt::format("   {} in {}; {} parameters, {} of weights; {} per inference\n",
                     core::counted(static_cast<std::size_t>(r.layers), "layer"),
                     core::counted(r.plan.kernels.size(), "kernel"), core::format_si(r.params, "", 4),
                     format_bytes(r.weight_bytes), format_ops(r.ops));
  const auto& peak_kernel = r.plan.kernels.empty() ? std::string("-") : r.plan.kernels[r.plan.peak_kernel].name;
  out += fmt::format(
      "   peak live activations {} (at {}){}\n", format_bytes(r.peak_activation_bytes), peak_kernel,
      r.state_bytes > 0 ? fmt::format("; persistent state (KV cache) {}", format_bytes(r.state_bytes)) : std::string());
  for (const auto& f : r.footprint) {
    const auto& level = hw.memory[f.level];
    std::vector<std::string> parts;
    if (f.weight_bytes > 0) parts.push_back("weights " + format_bytes(f.weight_bytes));
    if (f.activation_bytes > 0) parts.push_back("activations " + format_bytes(f.activation_bytes));
    if (f.state_bytes > 0) parts.push_back("state " + format_bytes(f.state_bytes));
    const double used = f.weight_bytes + f.activation_bytes + f.state_bytes;
    out += fmt::format("   {}: {} = {} of {} ({}) — {}\n", level.name, fmt::join(parts, " + "), format_bytes(used),
                       core::format_capacity(f.capacity_bytes), percent(used / f.capacity_bytes),
                       f.fits() ? "fits" : "DOES NOT FIT");
  }
  (void)net;
  out += "\n";
}

void floor_section(std::string& out, const BudgetReport& r, const model::HardwareSpec& hw) {
  out += "3. Bound and estimate\n";
  Table t({"estimate at effective roofs", "time", ""}, {Table::Align::left, Table::Align::right, Table::Align::left});
  t.add({"compute (sum of F/C)", format_seconds(r.compute_s), ""});
  for (const auto& row : r.levels)
    t.add(
        {fmt::format("memory {} (sum of M/B)", hw.memory[row.level].name), format_seconds(r.memory_s[row.level]), ""});
  t.add({"dispatch overhead (sum)", format_seconds(r.overhead_s), ""});
  if (r.weight_streamed_bytes > 0)
    t.add({"weights alone (weight bytes / B)", format_seconds(r.weight_stream_s),
           fmt::format("{} / {} ({})", format_bytes(r.weight_streamed_bytes),
                       format_bandwidth(r.weight_streamed_bytes / r.weight_stream_s),
                       hw.memory[static_cast<std::size_t>(r.plan.weight_level)].name)});
  t.add({"max of the totals", format_seconds(r.model_floor_s), overall_limit(r, hw)});
  t.add({"ESTIMATE: kernel by kernel, perfect overlap", format_seconds(r.estimate_s), "the verdict uses this"});
  t.add({"no overlap at all (upper end)", format_seconds(r.no_overlap_s), ""});
  t.add({"BOUND: peak roofs, no overhead, kernel by kernel", format_seconds(r.bound_s),
         "no correct measurement is faster"});
  out += t.render(3);
  out += fmt::format("   = {} inferences/s at the estimate, at most {} at the bound\n\n",
                     format_number(1.0 / r.estimate_s, 4), format_number(1.0 / r.bound_s, 4));
}

void verdict_section(std::string& out, const BudgetReport& r) {
  out += "4. The verdict (on the estimate; the bound decides only what is impossible)\n";
  if (!r.slice_s) {
    out += fmt::format("   no slice given (--slice 12ms): estimate {}, bound {}\n\n", format_seconds(r.estimate_s),
                       format_seconds(r.bound_s));
    return;
  }
  const double slice = *r.slice_s;
  if (r.impossible()) {
    out += fmt::format(
        "   IMPOSSIBLE AS SPECIFIED: the bound {} (peak roofs) exceeds the {} slice by {} ({}x).\n"
        "   No kernel work will save it: change the model, the input resolution or the precision.\n",
        format_seconds(r.bound_s), format_seconds(slice), format_seconds(r.bound_s - slice),
        format_number(r.bound_s / slice, 3));
  } else if (r.within_slice()) {
    out += fmt::format("   fits the {} slice with {} headroom at the estimate (estimate {}, {} left; bound {})\n",
                       format_seconds(slice), percent((slice - r.estimate_s) / slice), format_seconds(r.estimate_s),
                       format_seconds(slice - r.estimate_s), format_seconds(r.bound_s));
  } else {
    out += fmt::format(
        "   DOES NOT FIT at the estimate: {} exceeds the {} slice ({}x); the bound {} fits, so it needs "
        "kernels {}x closer to peak than the file's efficiencies (or calibrated ones)\n",
        format_seconds(r.estimate_s), format_seconds(slice), format_number(r.estimate_s / slice, 3),
        format_seconds(r.bound_s), format_number(r.estimate_s / slice, 3));
  }
  if (!r.fits) out += "   and the model does not fit in memory (see 2).\n";
  out += "\n";
}

void kernels_section(std::string& out, const BudgetReport& r, const model::HardwareSpec& hw,
                     const model::NetworkSpec& net) {
  out += "5. Kernels by arithmetic intensity (I = ops / bytes at the binding level; ridge = C / B there)\n";
  auto header = [&] {
    std::vector<std::string> h{"kernel",  "op",     "prec",     "ops",   "bytes",   "I op/B", "ridge",
                               "compute", "memory", "estimate", "limit", "of peak", "bound"};
    if (r.has_measurements) {
      h.emplace_back("measured");
      h.emplace_back("/estimate");
      h.emplace_back("diagnosis");
    }
    return h;
  };
  std::vector<Table::Align> align(header().size(), Table::Align::right);
  align[0] = align[1] = align[2] = Table::Align::left;
  align[10] = Table::Align::left;
  if (r.has_measurements) align.back() = Table::Align::left;
  Table below(header(), align);
  Table above(header(), align);
  Table none(header(), align);
  for (std::size_t k : r.by_intensity) {
    const auto& row = r.kernels[k];
    const auto& kernel = r.plan.kernels[k];
    const auto& t = row.time;
    const double memory_s = t.has_bytes() ? t.memory_s[static_cast<std::size_t>(t.limit_level)] : 0.0;
    std::vector<std::string> cells{kernel.name,
                                   kernel_op(kernel, net),
                                   row.precision,
                                   format_ops(kernel.total_ops),
                                   format_bytes(kernel.total_bytes),
                                   t.has_bytes() ? format_number(t.intensity, 4) : "-",
                                   t.has_bytes() ? format_number(t.ridge, 3) : "-",
                                   format_seconds(t.compute_s),
                                   format_seconds(memory_s),
                                   format_seconds(t.bound_s),
                                   limit_name(t, hw),
                                   percent(row.fraction_of_peak),
                                   format_seconds(row.bound.bound_s)};
    if (r.has_measurements) {
      cells.push_back(row.measured_s ? format_seconds(*row.measured_s) : "-");
      cells.push_back(row.ratio ? format_number(*row.ratio, 3) + "x" : "-");
      cells.push_back(row.diagnosis ? std::string(model::diagnosis_text(*row.diagnosis)) : "");
    }
    if (!t.has_bytes()) none.add(cells);
    else if (t.compute_s < memory_s) below.add(cells);
    else above.add(cells);
  }
  if (!below.empty()) {
    out += "   below the ridge — memory-bound: a bandwidth problem (fusion, quantisation, layout, tiling)\n";
    out += below.render(3);
  }
  if (!above.empty()) {
    out += "   above the ridge — compute-bound: a compute problem (better kernels)\n";
    out += above.render(3);
  }
  if (!none.empty()) {
    out += "   no memory traffic (free or fully on chip)\n";
    out += none.render(3);
  }
  if (r.has_measurements) {
    if (!r.unmatched_measurements.empty())
      out +=
          fmt::format("   measurements matching no layer or kernel: {}\n", fmt::join(r.unmatched_measurements, ", "));
    if (!r.unmeasured_kernels.empty() && !r.measured_total_s)
      out += fmt::format("   kernels without a measurement: {}\n", fmt::join(r.unmeasured_kernels, ", "));
    if (r.measured_total_s)
      out += fmt::format("   whole network measured {}: {}x the estimate {}, {}x the bound {}: {}\n",
                         format_seconds(*r.measured_total_s), format_number(*r.measured_total_s / r.estimate_s, 3),
                         format_seconds(r.estimate_s), format_number(*r.measured_total_s / r.bound_s, 3),
                         format_seconds(r.bound_s), model::diagnosis_text(*r.total_diagnosis));
  }
  out += "\n";
}

void comparison_section(std::string& out, const BudgetReport& r) {
  for (const auto& c : r.comparisons) {
    const auto& ka = r.plan.kernels[c.first_kernel];
    const auto& kb = r.plan.kernels[c.second_kernel];
    const auto& ta = r.kernels[c.first_kernel].time;
    const auto& tb = r.kernels[c.second_kernel].time;
    const double ops = ka.total_ops / kb.total_ops;
    out += fmt::format("   {} vs {}: {} of the ops ({}x {}), {} of the bytes, {} vs {}: {}x {}\n", c.first, c.second,
                       percent(ops), format_number(ops >= 1 ? ops : 1 / ops, 4), ops >= 1 ? "more" : "fewer",
                       percent(ka.total_bytes / kb.total_bytes), format_seconds(ta.bound_s), format_seconds(tb.bound_s),
                       format_number(ta.bound_s <= tb.bound_s ? tb.bound_s / ta.bound_s : ta.bound_s / tb.bound_s, 3),
                       ta.bound_s <= tb.bound_s ? "faster" : "slower");
  }
  if (!r.comparisons.empty()) out += "\n";
}

void fusion_section(std::string& out, const BudgetReport& r, const model::NetworkSpec& net) {
  const auto& f = r.fusion;
  out += "   Fusion (intermediates inside a kernel never touch memory)\n";
  if (f.groups.empty()) {
    out += fmt::format("   no layers fused (fusion: {})\n\n", model::fusion_mode_name(net.fusion));
    return;
  }
  Table t({"kernel", "traversals", "tail", "activation bytes", "saved", "activation patterns fused"},
          {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right,
           Table::Align::left});
  std::map<std::string, int> pattern_counts;
  for (const auto& g : f.groups) {
    const auto& kernel = r.plan.kernels[g.kernel];
    for (const auto& p : kernel.fused_patterns) ++pattern_counts[p];
    t.add({kernel.name, fmt::format("{} -> {}", g.traversals_before, g.traversals_after),
           fmt::format("{} -> {}", g.tail_before, g.tail_after),
           fmt::format("{} -> {}", format_bytes(g.activation_bytes_before), format_bytes(g.activation_bytes_after)),
           format_bytes(g.activation_bytes_before - g.activation_bytes_after),
           fmt::format("{}", fmt::join(kernel.fused_patterns, ", "))});
  }
  out += t.render(5);
  if (!pattern_counts.empty()) {
    std::vector<std::string> parts;
    for (const auto& [p, n] : pattern_counts) parts.push_back(fmt::format("{} x{}", p, n));
    out += fmt::format(
        "   activation subgraphs fused into their producer's epilogue, as TensorRT and the TFLite "
        "delegates fuse them: {}\n",
        fmt::join(parts, "; "));
  }
  out += "     (tail: the traversals after the kernel's first layer has read its inputs)\n";
  out += fmt::format("   whole network: {} -> {} traversals; {} -> {} moved ({} off chip -> {})\n", f.traversals_before,
                     f.traversals_after, format_bytes(f.bytes_before), format_bytes(f.bytes_after),
                     format_bytes(f.offchip_bytes_before), format_bytes(f.offchip_bytes_after));
  out += fmt::format("   memory traffic time {} -> {} (saves {}); floor {} -> {} (saves {})\n\n",
                     format_seconds(f.traffic_s_before), format_seconds(f.traffic_s_after),
                     format_seconds(f.traffic_s_before - f.traffic_s_after), format_seconds(f.floor_s_before),
                     format_seconds(f.floor_s_after), format_seconds(f.floor_s_before - f.floor_s_after));
}

void energy_section(std::string& out, const BudgetReport& r, const model::HardwareSpec& hw) {
  out += "6. Energy\n";
  std::vector<std::string> parts;
  for (std::size_t lv = 0; lv < hw.memory.size(); ++lv) {
    const auto& level = hw.memory[lv];
    double bytes = 0;
    for (const auto& k : r.plan.kernels) bytes += k.bytes[lv];
    if (bytes > 0 && !model::is_on_chip(level.kind))
      parts.push_back(
          fmt::format("{} x {}/B ({})", format_bytes(bytes), core::format_joules(level.energy_per_byte_J), level.name));
  }
  out += fmt::format("   energy floor (off-chip bytes x energy per byte): {} = {} per inference",
                     parts.empty() ? std::string("nothing off chip") : fmt::format("{}", fmt::join(parts, " + ")),
                     core::format_joules(r.energy_floor_J));
  if (r.rate_Hz)
    out += fmt::format(", {} at {}", core::format_watts(r.energy_floor_J * *r.rate_Hz), core::format_hertz(*r.rate_Hz));
  out += "\n";
  std::vector<std::string> breakdown{"compute " + core::format_joules(r.energy.compute_J)};
  for (std::size_t lv = 0; lv < hw.memory.size(); ++lv)
    if (r.energy.memory_J[lv] > 0)
      breakdown.push_back(hw.memory[lv].name + " " + core::format_joules(r.energy.memory_J[lv]));
  breakdown.push_back("static " + core::format_joules(r.energy.static_J));
  out += fmt::format("   estimate (over the estimated time): {} = {} per inference", fmt::join(breakdown, " + "),
                     core::format_joules(r.energy.total_J()));
  if (r.rate_Hz) {
    const double watts = r.energy.total_J() * *r.rate_Hz;
    out += fmt::format(", {} at {}", core::format_watts(watts), core::format_hertz(*r.rate_Hz));
    if (r.sustained_power_W)
      out += fmt::format(" ({} of the {} envelope)", percent(watts / *r.sustained_power_W),
                         core::format_watts(*r.sustained_power_W));
  }
  out += "\n";
  bool any_energy = false;
  for (const auto& roof : r.roofs)
    any_energy = any_energy || hw.units[r.unit].energy_per_op_J[roof.precision].has_value();
  if (!any_energy) out += "   (no energy_per_op or busy_power for this unit: arithmetic counted as 0 J)\n";
}

}  // namespace

std::string budget_text(const BudgetReport& r, const model::HardwareSpec& hw, const model::NetworkSpec& net) {
  const auto& unit = hw.units[r.unit];
  const auto& op = op_point(r, hw);
  std::string out = fmt::format("framesim budget: {} on {} / {} at {} ({})\n\n", net.name, hw.name, unit.name, op.name,
                                core::format_hertz(op.frequency_Hz));
  machine_section(out, r, hw);
  model_section(out, r, hw, net);
  floor_section(out, r, hw);
  verdict_section(out, r);
  kernels_section(out, r, hw, net);
  comparison_section(out, r);
  fusion_section(out, r, net);
  energy_section(out, r, hw);
  return out;
}

}  // namespace framesim::analysis
