#include "budget_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/units.hpp"
#include "html.hpp"
#include "svg.hpp"
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

namespace {

std::string percent(double fraction, int digits = 3) { return format_number(fraction * 100.0, digits) + "%"; }

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
  if (r.weight_read_bytes > 0)
    t.add({"weights alone (weight bytes / B)", format_seconds(r.weight_stream_s),
           fmt::format("{} / {} ({})", format_bytes(r.weight_read_bytes),
                       format_bandwidth(r.weight_read_bytes / r.weight_stream_s),
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

nlohmann::json budget_json(const BudgetReport& r, const model::HardwareSpec& hw, const model::NetworkSpec& net) {
  using nlohmann::json;
  const auto& unit = hw.units[r.unit];
  json j;
  j["hardware"] = {{"name", hw.name}, {"file", hw.source_file}};
  j["network"] = {{"name", net.name}, {"file", net.source_file}};
  j["unit"] = unit.name;
  j["operating_point"] = {{"name", op_point(r, hw).name}, {"frequency_Hz", op_point(r, hw).frequency_Hz}};
  json roofs = json::array();
  for (const auto& roof : r.roofs)
    roofs.push_back({{"precision", model::precision_name(roof.precision)},
                     {"peak_ops_per_s", roof.peak_ops_per_s},
                     {"effective_ops_per_s", roof.effective_ops_per_s}});
  json levels = json::array();
  for (const auto& row : r.levels) {
    json ridge = json::object();
    for (const auto& [p, v] : row.ridge) ridge[std::string(model::precision_name(p))] = v;
    json peak_ridge = json::object();
    for (const auto& [p, v] : row.peak_ridge) peak_ridge[std::string(model::precision_name(p))] = v;
    levels.push_back({{"name", hw.memory[row.level].name},
                      {"peak_Bps", row.peak_Bps},
                      {"streaming_Bps", row.streaming_Bps},
                      {"littles_cap_Bps", row.littles_cap_Bps ? json(*row.littles_cap_Bps) : json(nullptr)},
                      {"effective_Bps", row.effective_Bps},
                      {"ridge_ops_per_byte", ridge},
                      {"peak_ridge_ops_per_byte", peak_ridge}});
  }
  j["machine"] = {{"compute", roofs},
                  {"memory", levels},
                  {"sustained_power_W", r.sustained_power_W ? json(*r.sustained_power_W) : json(nullptr)}};
  json footprint = json::array();
  for (const auto& f : r.footprint)
    footprint.push_back({{"level", hw.memory[f.level].name},
                         {"weight_bytes", f.weight_bytes},
                         {"activation_bytes", f.activation_bytes},
                         {"state_bytes", f.state_bytes},
                         {"capacity_bytes", f.capacity_bytes},
                         {"fits", f.fits()}});
  j["model"] = {{"layers", r.layers},
                {"kernels", r.plan.kernels.size()},
                {"params", r.params},
                {"weight_bytes", r.weight_bytes},
                {"ops", r.ops},
                {"state_bytes", r.state_bytes},
                {"peak_activation_bytes", r.peak_activation_bytes},
                {"footprint", footprint},
                {"fits", r.fits}};
  json memory_s = json::object();
  for (const auto& row : r.levels) memory_s[hw.memory[row.level].name] = r.memory_s[row.level];
  j["floor"] = {{"compute_s", r.compute_s},
                {"memory_s", memory_s},
                {"overhead_s", r.overhead_s},
                {"model_floor_s", r.model_floor_s},
                {"estimate_s", r.estimate_s},
                {"bound_s", r.bound_s},
                {"verdict_uses", "estimate_s"},
                {"estimate_is", model::roofs_name(model::Roofs::effective)},
                {"bound_is", "peak roofs, no dispatch overhead, no Little's-law cap: no correct measurement is faster"},
                {"no_overlap_s", r.no_overlap_s},
                {"weight_read_bytes", r.weight_read_bytes},
                {"weight_stream_s", r.weight_stream_s},
                {"limit", overall_limit(r, hw)}};
  if (r.slice_s) {
    j["verdict"] = {{"slice_s", *r.slice_s},
                    {"uses", "estimate_s"},
                    {"fits", r.within_slice()},
                    {"impossible", r.impossible()},
                    {"headroom", (*r.slice_s - r.estimate_s) / *r.slice_s},
                    {"excess_s", std::max(0.0, r.estimate_s - *r.slice_s)}};
  }
  json kernels = json::array();
  for (std::size_t k = 0; k < r.kernels.size(); ++k) {
    const auto& row = r.kernels[k];
    const auto& kernel = r.plan.kernels[k];
    json bytes = json::object();
    json mem = json::object();
    for (std::size_t lv = 0; lv < hw.memory.size(); ++lv) {
      if (kernel.bytes[lv] > 0) {
        bytes[hw.memory[lv].name] = kernel.bytes[lv];
        mem[hw.memory[lv].name] = row.time.memory_s[lv];
      }
    }
    json layers = json::array();
    for (int l : kernel.layers) layers.push_back(net.layers[static_cast<std::size_t>(l)].name);
    json folded = json::array();
    for (int l : kernel.folded) folded.push_back(net.layers[static_cast<std::size_t>(l)].name);
    json entry{{"name", kernel.name},
               {"layers", layers},
               {"folded", folded},
               {"op", kernel_op(kernel, net)},
               {"precision", row.precision},
               {"ops", kernel.total_ops},
               {"bytes", bytes},
               {"compute_s", row.time.compute_s},
               {"memory_s", mem},
               {"overhead_s", row.time.overhead_s},
               {"estimate_s", row.time.bound_s},
               {"bound_s", row.bound.bound_s},
               {"no_overlap_s", row.time.no_overlap_s},
               {"limit", limit_name(row.time, hw)},
               {"intensity", row.time.has_bytes() ? json(row.time.intensity) : json(nullptr)},
               {"ridge", row.time.has_bytes() ? json(row.time.ridge) : json(nullptr)},
               {"fraction_of_peak", row.fraction_of_peak},
               {"energy_J", row.energy.total_J()}};
    if (row.measured_s) {
      entry["measured_s"] = *row.measured_s;
      if (row.ratio) entry["ratio"] = *row.ratio;
      if (row.bound_ratio) entry["bound_ratio"] = *row.bound_ratio;
      if (row.diagnosis) {
        entry["diagnosis"] = model::diagnosis_text(*row.diagnosis);
        entry["diagnosis_band"] = model::diagnosis_name(*row.diagnosis);
      }
    }
    kernels.push_back(entry);
  }
  j["kernels"] = kernels;
  json comparisons = json::array();
  for (const auto& c : r.comparisons) {
    const auto& ka = r.plan.kernels[c.first_kernel];
    const auto& kb = r.plan.kernels[c.second_kernel];
    comparisons.push_back(
        {{"first", c.first},
         {"second", c.second},
         {"ops_ratio", ka.total_ops / kb.total_ops},
         {"bytes_ratio", ka.total_bytes / kb.total_bytes},
         {"time_ratio", r.kernels[c.first_kernel].time.bound_s / r.kernels[c.second_kernel].time.bound_s}});
  }
  j["comparisons"] = comparisons;
  json order = json::array();
  for (auto k : r.by_intensity) order.push_back(r.plan.kernels[k].name);
  j["by_intensity"] = order;
  json groups = json::array();
  for (const auto& g : r.fusion.groups)
    groups.push_back({{"kernel", r.plan.kernels[g.kernel].name},
                      {"fused_patterns", r.plan.kernels[g.kernel].fused_patterns},
                      {"traversals_before", g.traversals_before},
                      {"traversals_after", g.traversals_after},
                      {"tail_traversals_before", g.tail_before},
                      {"tail_traversals_after", g.tail_after},
                      {"activation_bytes_before", g.activation_bytes_before},
                      {"activation_bytes_after", g.activation_bytes_after}});
  j["fusion"] = {{"mode", model::fusion_mode_name(net.fusion)},
                 {"traversals_before", r.fusion.traversals_before},
                 {"traversals_after", r.fusion.traversals_after},
                 {"bytes_before", r.fusion.bytes_before},
                 {"bytes_after", r.fusion.bytes_after},
                 {"offchip_bytes_before", r.fusion.offchip_bytes_before},
                 {"offchip_bytes_after", r.fusion.offchip_bytes_after},
                 {"traffic_s_before", r.fusion.traffic_s_before},
                 {"traffic_s_after", r.fusion.traffic_s_after},
                 {"floor_s_before", r.fusion.floor_s_before},
                 {"floor_s_after", r.fusion.floor_s_after},
                 {"groups", groups}};
  json memory_J = json::object();
  for (std::size_t lv = 0; lv < hw.memory.size(); ++lv)
    if (r.energy.memory_J[lv] > 0) memory_J[hw.memory[lv].name] = r.energy.memory_J[lv];
  j["energy"] = {{"offchip_bytes", r.offchip_bytes}, {"floor_J", r.energy_floor_J},
                 {"compute_J", r.energy.compute_J},  {"memory_J", memory_J},
                 {"static_J", r.energy.static_J},    {"total_J", r.energy.total_J()}};
  if (r.rate_Hz) {
    j["energy"]["rate_Hz"] = *r.rate_Hz;
    j["energy"]["floor_W"] = r.energy_floor_J * *r.rate_Hz;
    j["energy"]["total_W"] = r.energy.total_J() * *r.rate_Hz;
  }
  if (r.has_measurements) {
    j["unmatched_measurements"] = r.unmatched_measurements;
    j["unmeasured_kernels"] = r.unmeasured_kernels;
    if (r.measured_total_s)
      j["measured_total"] = {{"measured_s", *r.measured_total_s},
                             {"ratio", *r.measured_total_s / r.estimate_s},
                             {"bound_ratio", *r.measured_total_s / r.bound_s},
                             {"diagnosis", model::diagnosis_text(*r.total_diagnosis)},
                             {"diagnosis_band", model::diagnosis_name(*r.total_diagnosis)}};
  }
  return j;
}

std::string roofline_svg(const BudgetReport& r, const model::HardwareSpec& hw, const model::NetworkSpec& net) {
  // Each kernel is drawn in the colour of what binds it: the slope of its binding memory level, the flat
  // roof of its main precision (the one with the most operations), or grey when dispatch overhead binds.
  struct Point {
    double x, y;
    std::string label;
    int colour;
    double time_s;
    std::string limit;
  };
  // Roofs of equal value would hide each other: they share one line, one colour and one legend entry.
  std::vector<int> level_colour(hw.memory.size(), Plot::kGrey);
  std::vector<std::string> level_names(hw.memory.size());
  std::vector<bool> level_drawn(hw.memory.size(), false);
  int colour = 0;
  for (const auto& row : r.levels) {
    level_names[row.level] = hw.memory[row.level].name;
    for (const auto& other : r.levels) {
      if (&other == &row) break;
      if (std::fabs(other.effective_Bps - row.effective_Bps) <= 1e-9 * row.effective_Bps) {
        level_colour[row.level] = level_colour[other.level];
        level_names[other.level] += " = " + hw.memory[row.level].name;
        break;
      }
    }
    if (level_colour[row.level] == Plot::kGrey) {
      level_colour[row.level] = colour++;
      level_drawn[row.level] = true;
    }
  }
  model::PerPrecision<int> roof_colour;
  std::map<int, std::string> roof_names;  // colour -> the precisions sharing it
  for (const auto& roof : r.roofs) {
    for (const auto& other : r.roofs) {
      if (&other == &roof) break;
      if (std::fabs(other.effective_ops_per_s - roof.effective_ops_per_s) <= 1e-9 * roof.effective_ops_per_s) {
        roof_colour[roof.precision] = *roof_colour[other.precision];
        break;
      }
    }
    if (!roof_colour[roof.precision]) roof_colour[roof.precision] = colour++;
    auto& name = roof_names[*roof_colour[roof.precision]];
    name += (name.empty() ? "" : " = ") + std::string(model::precision_name(roof.precision));
  }
  std::vector<Point> points;
  for (std::size_t k = 0; k < r.kernels.size(); ++k) {
    const auto& t = r.kernels[k].time;
    const auto& kernel = r.plan.kernels[k];
    if (!t.has_bytes() || kernel.total_ops <= 0 || t.bound_s <= 0) continue;
    int c = Plot::kGrey;
    if (t.limit == LimitKind::memory) {
      c = level_colour[static_cast<std::size_t>(t.limit_level)];
    } else if (t.limit == LimitKind::compute) {
      std::optional<model::Precision> main;
      for (model::Precision p : model::kAllPrecisions)
        if (kernel.ops[p] && (!main || *kernel.ops[p] > *kernel.ops[*main])) main = p;
      if (main && roof_colour[*main]) c = *roof_colour[*main];
    }
    points.push_back({t.intensity, kernel.total_ops / t.bound_s, kernel.name, c, t.bound_s,
                      t.limit == LimitKind::memory    ? hw.memory[static_cast<std::size_t>(t.limit_level)].name
                      : t.limit == LimitKind::compute ? "compute"
                                                      : "overhead"});
  }
  // Labels for the costliest kernels only (the ones worth fusing or moving); every point has its tooltip.
  std::vector<std::size_t> by_cost(points.size());
  for (std::size_t i = 0; i < by_cost.size(); ++i) by_cost[i] = i;
  std::stable_sort(by_cost.begin(), by_cost.end(),
                   [&](std::size_t a, std::size_t b) { return points[a].time_s > points[b].time_s; });
  std::vector<bool> labelled(points.size(), false);
  for (std::size_t i = 0; i < std::min<std::size_t>(8, by_cost.size()); ++i) labelled[by_cost[i]] = true;
  double x_min = 1e-2, x_max = 1e3, y_max = 0;
  for (const auto& roof : r.roofs) y_max = std::max(y_max, roof.peak_ops_per_s);
  for (const auto& row : r.levels)
    for (const auto& [p, ridge] : row.ridge) {
      x_min = std::min(x_min, ridge / 10);
      x_max = std::max(x_max, ridge * 10);
    }
  double y_min = y_max;
  for (const auto& p : points) {
    x_min = std::min(x_min, p.x / 2);
    x_max = std::max(x_max, p.x * 2);
    y_min = std::min(y_min, p.y / 2);
  }
  for (const auto& row : r.levels) y_min = std::min(y_min, row.effective_Bps * x_min);
  y_min = std::max(y_min, y_max * 1e-6);

  LogLogPlot plot(fmt::format("Roofline: {} on {} / {}", net.name, hw.name, hw.units[r.unit].name),
                  "arithmetic intensity (op/byte)", "attainable performance", {x_min, x_max}, {y_min, y_max * 3}, "",
                  "OP/s");
  // Stacked rooflines: one slope per memory level, one flat roof per precision the network's kernels use; the
  // estimate's (effective) roofs solid, the bound's (peak) roofs dashed in the same colour where they differ.
  for (const auto& row : r.levels) {
    if (!level_drawn[row.level]) continue;
    plot.line({{x_min, row.effective_Bps * x_min}, {y_max / row.effective_Bps, y_max}}, level_colour[row.level],
              fmt::format("estimate: {} {}", level_names[row.level], format_bandwidth(row.effective_Bps)), false);
    if (row.peak_Bps > row.effective_Bps)
      plot.line({{x_min, row.peak_Bps * x_min}, {y_max / row.peak_Bps, y_max}}, level_colour[row.level],
                fmt::format("bound: {} peak {}", hw.memory[row.level].name, format_bandwidth(row.peak_Bps)), true);
  }
  model::PerPrecision<bool> used;
  for (const auto& kernel : r.plan.kernels)
    for (model::Precision p : model::kAllPrecisions)
      if (kernel.ops[p] && *kernel.ops[p] > 0) used[p] = true;
  std::set<int> roofs_drawn;
  for (const auto& roof : r.roofs) {
    if (!used[roof.precision]) continue;  // no kernel of the network runs at it
    if (!roofs_drawn.insert(*roof_colour[roof.precision]).second) continue;
    double x_start = x_max;
    for (const auto& row : r.levels) x_start = std::min(x_start, roof.effective_ops_per_s / row.effective_Bps);
    plot.line({{x_start, roof.effective_ops_per_s}, {x_max, roof.effective_ops_per_s}}, *roof_colour[roof.precision],
              fmt::format("estimate: {} {}", roof_names[*roof_colour[roof.precision]],
                          format_ops_rate(roof.effective_ops_per_s)),
              false);
    if (roof.peak_ops_per_s > roof.effective_ops_per_s) {
      double x_peak = x_max;
      for (const auto& row : r.levels) x_peak = std::min(x_peak, roof.peak_ops_per_s / row.peak_Bps);
      plot.line(
          {{x_peak, roof.peak_ops_per_s}, {x_max, roof.peak_ops_per_s}}, *roof_colour[roof.precision],
          fmt::format("bound: {} peak {}", model::precision_name(roof.precision), format_ops_rate(roof.peak_ops_per_s)),
          true);
    }
  }
  std::set<int> seen;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    plot.point(p.x, p.y, p.colour, labelled[i] ? p.label : "",
               fmt::format("{}: {} ({}-bound), intensity {} op/B, {}", p.label, format_seconds(p.time_s), p.limit,
                           core::format_number(p.x, 4), format_ops_rate(p.y)));
    seen.insert(p.colour);
  }
  // One legend entry per colour used, in the order of the lines, dispatch-bound last.
  for (const auto& row : r.levels)
    if (level_drawn[row.level] && seen.count(level_colour[row.level]))
      plot.marker_legend(level_colour[row.level], fmt::format("kernel: {}-bound", level_names[row.level]));
  std::set<int> roof_legend;
  for (const auto& roof : r.roofs)
    if (seen.count(*roof_colour[roof.precision]) && roof_legend.insert(*roof_colour[roof.precision]).second)
      plot.marker_legend(*roof_colour[roof.precision],
                         fmt::format("kernel: {}-bound", roof_names[*roof_colour[roof.precision]]));
  if (seen.count(Plot::kGrey)) plot.marker_legend(Plot::kGrey, "kernel: overhead-bound");
  return plot.render();
}

std::string budget_html(const BudgetReport& r, const model::HardwareSpec& hw, const model::NetworkSpec& net) {
  const nlohmann::json j = budget_json(r, hw, net);
  std::string b = fmt::format("<h1>framesim budget: {} on {} / {}</h1>\n", html::escape(net.name),
                              html::escape(hw.name), html::escape(hw.units[r.unit].name));
  b += html::heading("Verdict");
  std::string verdict = fmt::format(
      "estimate {} per inference at effective roofs ({}), bound {} at peak roofs; energy {} per inference",
      html::number("estimate", format_seconds(r.estimate_s)), html::escape(j["floor"]["limit"].get<std::string>()),
      html::number("bound", format_seconds(r.bound_s)),
      html::number("energy", core::format_joules(r.energy.total_J())));
  const char* css = "maybe";
  if (r.slice_s) {
    css = r.within_slice() ? "ok" : "bad";
    verdict += fmt::format("<br>against the {} slice: {}", html::number("slice", format_seconds(*r.slice_s)),
                           r.impossible()     ? "IMPOSSIBLE (the bound exceeds it)"
                           : r.within_slice() ? "fits at the estimate"
                                              : "DOES NOT FIT at the estimate");
  }
  b += fmt::format("<div class=\"verdict {}\" id=\"verdict\">{}</div>\n", css, verdict);
  b += html::heading("Roofline");
  b += html::figure(roofline_svg(r, hw, net), "roofline",
                    "Every kernel at its bound, coloured by what binds it; the costliest are labelled, hover any point "
                    "for its name, time and intensity.");
  b += html::heading("Kernels, costliest first");
  std::vector<std::size_t> order(r.kernels.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t c) { return r.kernels[a].time.bound_s > r.kernels[c].time.bound_s; });
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k : order) {
    const auto& e = j["kernels"][k];
    rows.push_back({e["name"].get<std::string>(), e["op"].get<std::string>(), format_ops(e["ops"].get<double>()),
                    e["intensity"].is_null() ? "-" : format_number(e["intensity"].get<double>(), 4),
                    format_seconds(e["estimate_s"].get<double>()), format_seconds(e["bound_s"].get<double>()),
                    e["limit"].get<std::string>(), format_number(e["fraction_of_peak"].get<double>() * 100, 3) + "%"});
  }
  b += html::table({"kernel", "op", "ops", "intensity (op/B)", "estimate", "bound", "limit", "of peak"}, rows);
  b += html::heading("The report");
  b += "<pre>" + html::escape(budget_text(r, hw, net)) + "</pre>\n";
  return html::page(fmt::format("framesim budget: {} on {}", net.name, hw.name), b);
}

}  // namespace framesim::analysis
