#include "models/pricing.hpp"

namespace gp {

namespace {

constexpr double kHoursPerYear = 24.0 * 365.0;

Dollars on_prem_per_hour(const JobConfig& job) {
  const auto& p = job.pricing;
  const auto& c = job.cluster;
  const double nodes = c.nodes;
  const double capex = p.capex_per_node.value_or(Dollars(0)).value() * nodes;
  const double depreciation = capex * (1.0 - p.residual_fraction) / (p.depreciation_years * kHoursPerYear);
  // Power at TDP for the GPUs; the rest of the node is not in the GPU catalog, so it is left to capex/staff.
  const double kw = c.gpu.tdp.kw() * c.total_gpus() * p.pue.value_or(1.0);
  const double power = kw * p.electricity_per_kwh.value_or(Dollars(0)).value();
  const double staff = p.staff_per_year.value() / kHoursPerYear;
  return Dollars(depreciation + power + staff);
}

}  // namespace

Dollars cluster_price_per_hour(const JobConfig& job) {
  const auto& p = job.pricing;
  const auto& c = job.cluster;
  if (p.plan == PricingPlan::on_prem) return on_prem_per_hour(job);
  if (p.price_per_gpu_hour) return *p.price_per_gpu_hour * static_cast<double>(c.total_gpus());
  if (!c.instance) return Dollars(0);
  const auto& pr = c.instance->prices;
  Dollars node = pr.on_demand_per_hour;
  if (p.plan == PricingPlan::reserved && pr.reserved_per_hour) node = *pr.reserved_per_hour;
  if (p.plan == PricingPlan::spot && pr.spot_per_hour) node = *pr.spot_per_hour;
  // A partial node (fewer GPUs than the instance has) still pays for the whole instance.
  return node * static_cast<double>(c.nodes);
}

}  // namespace gp
