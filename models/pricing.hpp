// Prices a cluster for a duration: cloud plans from the instance catalog, or on-prem TCO per hour
// (depreciation, power with PUE, staff). Pure functions over value types.
#pragma once

#include "models/job.hpp"
#include "models/units.hpp"

namespace gp {

// Hourly price of the whole cluster under the configuration's plan. Preconditions: the scenario was
// validated (a spot/reserved plan has a price, on-prem has capex, electricity and PUE).
Dollars cluster_price_per_hour(const JobConfig& job);

}  // namespace gp
