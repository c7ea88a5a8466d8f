// The budget as JSON (framesim budget --json; the HTML page reads its numbers from it too).
#include "budget_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "budget_names.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace framesim::analysis {

using model::BudgetReport;

namespace {

using nlohmann::json;

/// Step 1, the machine: every compute roof and every level on the unit's path.
json machine_json(const BudgetReport& r, const model::HardwareSpec& hw) {
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
  return {{"compute", roofs},
          {"memory", levels},
          {"sustained_power_W", r.sustained_power_W ? json(*r.sustained_power_W) : json(nullptr)}};
}

/// One kernel: what it is made of, its times at effective and peak roofs, what binds it, its energy, and its
/// measurement when there is one.
json kernel_json(const BudgetReport& r, std::size_t k, const model::HardwareSpec& hw, const model::NetworkSpec& net) {
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
  return entry;
}

/// What fusion changed: traversals, bytes, traffic and floor before and after, and each fused group.
json fusion_json(const BudgetReport& r, const model::NetworkSpec& net) {
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
  return {{"mode", model::fusion_mode_name(net.fusion)},
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
}

}  // namespace

nlohmann::json budget_json(const BudgetReport& r, const model::HardwareSpec& hw, const model::NetworkSpec& net) {
  const auto& unit = hw.units[r.unit];
  json j;
  j["hardware"] = {{"name", hw.name}, {"file", hw.source_file}};
  j["network"] = {{"name", net.name}, {"file", net.source_file}};
  j["unit"] = unit.name;
  j["operating_point"] = {{"name", op_point(r, hw).name}, {"frequency_Hz", op_point(r, hw).frequency_Hz}};
  j["machine"] = machine_json(r, hw);
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
  for (std::size_t k = 0; k < r.kernels.size(); ++k) kernels.push_back(kernel_json(r, k, hw, net));
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
  j["fusion"] = fusion_json(r, net);
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

}  // namespace framesim::analysis
