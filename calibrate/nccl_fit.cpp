#include "calibrate/nccl_fit.hpp"

#include "calibrate/json_text.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <sstream>
#include <utility>

namespace gp::calibrate {

namespace {

using collective::Algorithm;
using collective::Op;
using collective::Topology;

// Hop count H and full-rate transfer time X of one collective's plan: plan_time = H x L + X / e.
struct Terms {
  double hops = 0;
  double transfer_s = 0;
};

Terms plan_terms(Op op, Algorithm a, Bytes size, const Topology& t) {
  const collective::Plan p = collective::plan(op, a, size, t);
  Topology unit = t;
  unit.intra.hop_latency = Seconds(0);
  unit.intra.efficiency = 1.0;
  unit.inter.hop_latency = Seconds(0);
  unit.inter.efficiency = 1.0;
  Terms terms;
  for (const auto& ph : p.phases) terms.hops += ph.intra_hops + ph.inter_hops;
  terms.transfer_s = collective::plan_time(p, unit).value();
  return terms;
}

struct FitRow {
  Terms terms;
  double measured_s = 0;
  std::size_t row_index = 0;  // into CommCalibration::rows (when called from calibrate_comm)
};

CommFit solve(Algorithm a, int gpus, const std::vector<FitRow>& rows, const Topology& t) {
  CommFit f;
  f.algorithm = a;
  f.gpus = gpus;
  f.rows = static_cast<int>(rows.size());
  f.catalog_hop_latency = t.intra.hop_latency;
  f.catalog_efficiency = t.intra.efficiency;
  if (rows.size() < 2) {
    f.note = "fewer than 2 rows";
    return f;
  }
  Eigen::MatrixXd A(rows.size(), 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    A(r, 0) = rows[i].terms.hops / rows[i].measured_s;
    A(r, 1) = rows[i].terms.transfer_s / rows[i].measured_s;
  }
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(A);
  if (qr.rank() < 2) {
    f.note = "singular: the sizes do not separate latency from bandwidth";
    return f;
  }
  const Eigen::Vector2d x = qr.solve(b);
  if (!(x(1) > 0)) {
    f.note = "non-positive inverse efficiency: the rows are not bandwidth-bound anywhere";
    return f;
  }
  f.valid = true;
  f.hop_latency = Seconds(x(0));
  f.efficiency = 1.0 / x(1);
  if (x(0) < 0) f.note = "negative hop latency: fixed costs are not per hop here";
  const Eigen::VectorXd res = A * x - b;
  f.rms_rel_err_pct = 100.0 * std::sqrt(res.squaredNorm() / static_cast<double>(rows.size()));
  return f;
}

Topology without_nvls(Topology t) {
  t.intra.nvls_efficiency = 0;
  return t;
}

using GroupKey = std::pair<int, int>;  // (algorithm, gpus)

std::map<GroupKey, std::vector<FitRow>> group_rows(const NcclMeasurement& m, const Topology& t,
                                                  std::vector<Algorithm>* algos) {
  std::map<GroupKey, std::vector<FitRow>> groups;
  std::size_t index = 0;
  for (const auto& [op, rows] : m.ops) {
    for (const auto& row : rows) {
      if (m.gpus < 2 || !(row.time.value() > 0)) continue;
      const Algorithm a = collective::estimate(op, row.bytes, t).algorithm;
      if (algos) algos->push_back(a);
      groups[{static_cast<int>(a), m.gpus}].push_back({plan_terms(op, a, row.bytes, t), row.time.value(), index++});
    }
  }
  return groups;
}

double busbw_of(Op op, Bytes b, Seconds time, int ranks) {
  return time.value() > 0 ? b.value() / time.value() * collective::bus_factor(op, ranks) : 0.0;
}

void summarise(CommCalibration& c, Bytes large_from, double tolerance) {
  CommSummary& s = c.summary;
  s.large_from = large_from;
  s.tolerance_pct = tolerance;
  double all = 0, ar = 0;
  for (const auto& r : c.rows) {
    ++s.rows;
    if (r.bytes < large_from) continue;
    ++s.large_rows;
    all += std::abs(r.err_pct);
    if (r.op != Op::all_reduce) continue;
    ++s.allreduce_large_rows;
    ar += std::abs(r.err_pct);
    s.allreduce_large_max_abs_err_pct = std::max(s.allreduce_large_max_abs_err_pct, std::abs(r.err_pct));
  }
  s.large_mean_abs_err_pct = s.large_rows ? all / s.large_rows : 0;
  s.allreduce_large_mean_abs_err_pct = s.allreduce_large_rows ? ar / s.allreduce_large_rows : 0;
  s.pass = s.allreduce_large_rows > 0 && s.allreduce_large_mean_abs_err_pct <= tolerance;
}

}  // namespace

Topology single_node_topology(const InterconnectSpec& intra, int gpus) {
  Topology t;
  t.gpus_per_node = gpus;
  t.nodes = 1;
  t.intra = intra;
  t.intra.nvls_efficiency = 0;
  return t;
}

std::vector<CommFit> fit_comm(const NcclMeasurement& m, const Topology& t0) {
  const Topology t = without_nvls(t0);
  std::vector<CommFit> out;
  for (const auto& [key, rows] : group_rows(m, t, nullptr))
    out.push_back(solve(static_cast<Algorithm>(key.first), key.second, rows, t));
  return out;
}

CommCalibration calibrate_comm(const NcclMeasurement& m, const Topology& t0, Bytes large_from, double tolerance) {
  const Topology t = without_nvls(t0);
  CommCalibration c;
  c.gpus = m.gpus;
  for (const auto& [op, rows] : m.ops) {
    for (const auto& row : rows) {
      if (m.gpus < 2 || !(row.time.value() > 0)) continue;
      const collective::Result r = collective::estimate(op, row.bytes, t);
      CommRow cr;
      cr.op = op;
      cr.algorithm = r.algorithm;
      cr.bytes = row.bytes;
      cr.measured_time = row.time;
      cr.predicted_time = r.time;
      cr.measured_busbw = ByteRate(busbw_of(op, row.bytes, row.time, m.gpus));
      cr.predicted_busbw = ByteRate(busbw_of(op, row.bytes, r.time, m.gpus));
      cr.err_pct = 100.0 * (cr.predicted_busbw.value() - cr.measured_busbw.value()) / cr.measured_busbw.value();
      c.rows.push_back(cr);
    }
  }
  for (const auto& [key, rows] : group_rows(m, t, nullptr)) {
    CommFit f = solve(static_cast<Algorithm>(key.first), key.second, rows, t);
    if (f.valid) {
      for (const auto& fr : rows) {
        const double model_s = fr.terms.hops * f.hop_latency.value() + fr.terms.transfer_s / f.efficiency;
        c.rows[fr.row_index].fitted_err_pct = 100.0 * (fr.measured_s / model_s - 1.0);  // busbw ~ 1 / time
      }
    }
    c.fits.push_back(f);
  }
  summarise(c, large_from, tolerance);
  return c;
}

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string size_label(Bytes b) {
  const double v = b.value();
  if (v >= 1073741824.0) return fmt("%.0fG", v / 1073741824.0);
  if (v >= 1048576.0) return fmt("%.0fM", v / 1048576.0);
  if (v >= 1024.0) return fmt("%.0fK", v / 1024.0);
  return fmt("%.0f", v);
}

}  // namespace

std::string render_comm_table(const CommCalibration& c, const NcclMeasurement& m) {
  std::ostringstream o;
  o << "# " << m.file << ": " << m.gpus << " GPU(s), NCCL " << m.nccl_version << ", measured " << m.measured_on
    << "\n";
  if (c.rows.empty()) {
    o << "nothing to compare: collectives over one GPU move no data between GPUs\n";
    return o.str();
  }
  char line[160];
  std::snprintf(line, sizeof line, "%-15s %6s %-8s %11s %11s %9s %9s %7s %7s\n", "op", "size", "algo", "meas us",
                "pred us", "meas GB/s", "pred GB/s", "err%", "fit%");
  o << line;
  for (const auto& r : c.rows) {
    std::snprintf(line, sizeof line, "%-15s %6s %-8s %11.2f %11.2f %9.2f %9.2f %+7.1f %7s\n",
                  collective::to_string(r.op), size_label(r.bytes).c_str(), collective::to_string(r.algorithm),
                  r.measured_time.us(), r.predicted_time.us(), r.measured_busbw.gbps(), r.predicted_busbw.gbps(),
                  r.err_pct, r.fitted_err_pct ? fmt("%+.1f", *r.fitted_err_pct).c_str() : "-");
    o << line;
  }
  o << "\nfit per algorithm and GPU count (T = hops x L + bytes-on-link / (e x link rate)):\n";
  for (const auto& f : c.fits) {
    o << "  " << collective::to_string(f.algorithm) << " x" << f.gpus << ": ";
    if (f.valid)
      o << "L " << fmt("%.2f", f.hop_latency.us()) << " us (catalog " << fmt("%.2f", f.catalog_hop_latency.us())
        << "), e " << fmt("%.3f", f.efficiency) << " (catalog " << fmt("%.3f", f.catalog_efficiency) << "), "
        << f.rows << " rows, rms " << fmt("%.1f", f.rms_rel_err_pct) << "%";
    else
      o << "not fitted (" << f.note << ")";
    if (f.valid && !f.note.empty()) o << "; " << f.note;
    o << "\n";
  }
  const auto& s = c.summary;
  const auto [mean, tol] = verdict_figures(s.allreduce_large_mean_abs_err_pct, s.tolerance_pct,
                                           s.allreduce_large_mean_abs_err_pct <= s.tolerance_pct, 1, 0);
  o << "\nall-reduce busbw at >= " << size_label(s.large_from) << ": mean |error| " << mean << "%, max "
    << fmt("%.1f", s.allreduce_large_max_abs_err_pct) << "% over " << s.allreduce_large_rows << " sizes (tolerance "
    << tol << "%) " << (s.allreduce_large_rows == 0 ? "not judged" : s.pass ? "PASS" : "FAIL")
    << "\nall ops at >= " << size_label(s.large_from) << ": mean |error| "
    << fmt("%.1f", s.large_mean_abs_err_pct) << "% over " << s.large_rows << " rows\n";
  return o.str();
}

namespace {

nlohmann::ordered_json fit_json(const CommFit& f) {
  nlohmann::ordered_json j = {{"algorithm", collective::to_string(f.algorithm)},
                              {"gpus", f.gpus},
                              {"rows", f.rows},
                              {"valid", f.valid}};
  if (f.valid) {
    j["hop_latency_us"] = f.hop_latency.us();
    j["efficiency"] = f.efficiency;
    j["rms_rel_err_pct"] = f.rms_rel_err_pct;
  }
  j["catalog_hop_latency_us"] = f.catalog_hop_latency.us();
  j["catalog_efficiency"] = f.catalog_efficiency;
  if (!f.note.empty()) j["note"] = f.note;
  return j;
}

}  // namespace

nlohmann::ordered_json render_comm_json(const CommCalibration& c, const NcclMeasurement& m) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : c.rows) {
    nlohmann::ordered_json j = {{"op", collective::to_string(r.op)},
                                {"bytes", static_cast<std::uint64_t>(std::llround(r.bytes.value()))},  // an integer, as nccl-tests prints it
                                {"algorithm", collective::to_string(r.algorithm)},
                                {"measured_time_us", r.measured_time.us()},
                                {"predicted_time_us", r.predicted_time.us()},
                                {"measured_busbw_gbps", r.measured_busbw.gbps()},
                                {"predicted_busbw_gbps", r.predicted_busbw.gbps()},
                                {"err_pct", r.err_pct}};
    if (r.fitted_err_pct) j["fitted_err_pct"] = *r.fitted_err_pct;
    rows.push_back(j);
  }
  nlohmann::ordered_json fits = nlohmann::ordered_json::array();
  for (const auto& f : c.fits) fits.push_back(fit_json(f));
  const auto& s = c.summary;
  return {{"file", m.file},
          {"gpus", m.gpus},
          {"nccl_version", m.nccl_version},
          {"rows", rows},
          {"fits", fits},
          {"summary",
           {{"large_from_bytes", s.large_from.value()},
            {"tolerance_pct", s.tolerance_pct},
            {"rows", s.rows},
            {"large_rows", s.large_rows},
            {"large_mean_abs_err_pct", s.large_mean_abs_err_pct},
            {"allreduce_large_rows", s.allreduce_large_rows},
            {"allreduce_large_mean_abs_err_pct", s.allreduce_large_mean_abs_err_pct},
            {"allreduce_large_max_abs_err_pct", s.allreduce_large_max_abs_err_pct},
            {"pass", s.pass}}}};
}

nlohmann::ordered_json comm_fit_json(const CommCalibration& c, const NcclMeasurement& m,
                                     const std::string& interconnect_id) {
  nlohmann::ordered_json fits = nlohmann::ordered_json::array();
  for (const auto& f : c.fits) fits.push_back(fit_json(f));
  return {{"schema", "gpuplan-comm-fit/1"},
          {"interconnect", interconnect_id},
          {"gpu_id", m.gpu_id},
          {"gpus", m.gpus},
          {"nccl_version", m.nccl_version},
          {"source", "gpuplan calibrate comm: least squares of relative time residuals, T = hops x L + "
                     "bytes-on-link / (e x catalog link rate), per algorithm and GPU count, over every size of " +
                         m.file + " (docs/calibration.md, Multi-GPU calibration)"},
          {"as_of", m.measured_on},
          {"fits", fits}};
}

}  // namespace gp::calibrate
