#include "model/runtime.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace framesim::model {

namespace {

[[noreturn]] void refuse(const core::SourceLocation& at, const std::string& key, const std::string& message) {
  throw core::UserError(std::vector<core::Diagnostic>{{at, key, message}});
}

}  // namespace

HardwareSpec apply_runtime(const HardwareSpec& hw, const RuntimeProfile& profile) {
  if (!profile.hardware.empty() && profile.hardware != hw.name)
    refuse(profile.hardware_at, "hardware",
           fmt::format("runtime profile \"{}\" was made for hardware \"{}\", not \"{}\" ({})", profile.name,
                       profile.hardware, hw.name, hw.source_file));
  HardwareSpec out = hw;
  for (const auto& p : profile.units) {
    const auto u = out.find_unit(p.unit);
    if (!u) refuse(p.at, "units." + p.unit, fmt::format("{} has no unit \"{}\"", hw.source_file, p.unit));
    ComputeUnitSpec& unit = out.units[*u];
    if (p.has_efficiency) {
      std::vector<core::Diagnostic> unpeaked;
      for (const auto& named : p.named_precisions)
        if (unit.peak_ops_per_s.any() && !unit.peak_ops_per_s[named.precision])
          unpeaked.push_back(
              {named.at, named.key,
               fmt::format("efficiency for {} but unit \"{}\" of {} has no peak for {}",
                           precision_name(named.precision), p.unit, hw.source_file, precision_name(named.precision))});
      if (!unpeaked.empty()) throw core::UserError(std::move(unpeaked));
      unit.efficiency = p.efficiency;
      unit.efficiency_by_op = p.efficiency_by_op;
    }
    if (p.dispatch_overhead_s) unit.dispatch_overhead_s = *p.dispatch_overhead_s;
    if (p.output_cost_s) unit.output_cost_s = *p.output_cost_s;
    if (p.fuses) unit.runtime_fuses = *p.fuses;
    if (p.weight_caching) unit.weight_caching = *p.weight_caching;
    if (p.weights) {
      const auto lv = out.find_level(*p.weights);
      bool on_path = false;
      if (lv)
        for (std::size_t l : unit.memory_path) on_path = on_path || l == *lv;
      if (!on_path)
        refuse(p.weights_at, "units." + p.unit + ".weights",
               fmt::format("\"{}\" is not a memory level on unit \"{}\"'s path in {}", *p.weights, p.unit,
                           hw.source_file));
      unit.weights_level = *lv;
    }
  }
  out.runtime = profile.name;
  out.runtime_file = profile.source_file;
  return out;
}

RuntimeProfile runtime_from(const HardwareSpec& base, const HardwareSpec& tuned, std::size_t unit,
                            const std::string& name) {
  RuntimeProfile r;
  r.name = name;
  r.hardware = base.name;
  const ComputeUnitSpec& b = base.units.at(unit);
  const ComputeUnitSpec& t = tuned.units.at(unit);
  RuntimeUnitProfile p;
  p.unit = t.name;
  p.has_efficiency = true;
  for (Precision q : kAllPrecisions)
    if (t.peak_ops_per_s[q]) p.efficiency[q] = t.efficiency_for(q);
  for (OpClass c : kAllOpClasses)
    for (Precision q : kAllPrecisions)
      if (t.peak_ops_per_s[q] && t.efficiency_by_op[static_cast<std::size_t>(c)][q])
        p.efficiency_by_op[static_cast<std::size_t>(c)][q] = t.efficiency_for(q, c);
  p.dispatch_overhead_s = t.dispatch_overhead_s;
  p.output_cost_s = t.output_cost_s;
  if (t.weights_level && t.weights_level != b.weights_level) p.weights = tuned.memory.at(*t.weights_level).name;
  if (t.runtime_fuses != b.runtime_fuses) p.fuses = t.runtime_fuses;
  if (t.weight_caching != WeightCaching::whole) p.weight_caching = t.weight_caching;  // the runtime's, said always
  r.units.push_back(p);
  return r;
}

std::string runtime_label(const HardwareSpec& hw) {
  if (hw.runtime.empty()) return "none (the hardware file's efficiencies)";
  return hw.runtime_file.empty() ? hw.runtime : fmt::format("{} ({})", hw.runtime, hw.runtime_file);
}

}  // namespace framesim::model
