#include "calibrate/nccl_io.hpp"

#include <array>
#include <fstream>
#include <sstream>
#include <utility>

#include "calibrate/json_fields.hpp"

namespace gp::calibrate {

namespace {

using collective::Op;

constexpr std::array<std::pair<Op, const char*>, 5> kKeys = {{{Op::all_reduce, "all_reduce"},
                                                              {Op::all_gather, "all_gather"},
                                                              {Op::reduce_scatter, "reduce_scatter"},
                                                              {Op::all_to_all, "all_to_all"},
                                                              {Op::broadcast, "broadcast"}}};

std::optional<NcclRow> parse_row(FieldReader& r) {
  // Ranges far beyond any nccl-tests run (sizes to 16 TiB, times to 1,000 s, bandwidths to 1 PB/s); outside them
  // the table printed 300-digit sizes, inf and nan. nccl-tests prints 0.00 GB/s for tiny sizes: 0 is allowed.
  const auto bytes = r.integer("bytes", true, 1, 17592186044416.0);
  const auto time = r.number_in("time_us", true, 0.001, 1e9);
  const auto algbw = r.number_in("algbw_GBps", false, 0, 1e6);
  const auto busbw = r.number_in("busbw_GBps", false, 0, 1e6);
  if (!bytes || !time) return std::nullopt;
  NcclRow row;
  row.bytes = Bytes(*bytes);
  row.time = Seconds::us(*time);
  row.algbw = algbw ? ByteRate::gbps(*algbw) : row.bytes / row.time;
  row.busbw = ByteRate::gbps(busbw.value_or(0));
  return row;
}

void parse_rows(const nlohmann::json& arr, const std::string& file, const std::string& base, Op op,
                NcclMeasurement& m, std::vector<std::string>& errors) {
  if (!arr.is_array()) {
    errors.push_back(file + ":" + base + ": expected an array of rows, got " + arr.dump().substr(0, 40));
    return;
  }
  std::vector<NcclRow>& rows = m.ops[op];
  bool order_reported = false;  // the first size out of order in a collective, not every one after it
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string at = base + "/" + std::to_string(i);
    if (!arr[i].is_object()) {
      errors.push_back(file + ":" + at + ": expected an object with bytes and time_us");
      continue;
    }
    FieldReader r(arr[i], file, at, errors);
    auto row = parse_row(r);
    if (!row) continue;
    if (!order_reported && !rows.empty() && !(row->bytes > rows.back().bytes)) {
      errors.push_back(file + ":" + at + "/bytes: sizes must increase, got " + arr[i]["bytes"].dump() +
                       " after " + std::to_string(static_cast<long long>(rows.back().bytes.value())));
      order_reported = true;
    }
    rows.push_back(*row);
  }
}

void parse_ops(const nlohmann::json& ops, const std::string& file, const std::string& base, NcclMeasurement& m,
               std::vector<std::string>& errors) {
  if (!ops.is_object()) {
    errors.push_back(file + ":" + base + ": expected an object of collectives, got " + ops.dump().substr(0, 40));
    return;
  }
  for (const auto& [key, rows] : ops.items()) {
    const auto op = op_from_probe_key(key);
    if (!op) {
      errors.push_back(file + ":" + base + "/" + key +
                       ": unknown collective; expected all_reduce, all_gather, reduce_scatter, all_to_all or "
                       "broadcast");
      continue;
    }
    parse_rows(rows, file, base + "/" + key, *op, m, errors);
  }
}

}  // namespace

const char* probe_key(Op op) {
  for (const auto& [o, k] : kKeys)
    if (o == op) return k;
  return "?";
}

std::optional<Op> op_from_probe_key(const std::string& key) {
  for (const auto& [o, k] : kKeys)
    if (key == k) return o;
  return std::nullopt;
}

std::optional<NcclMeasurement> parse_nccl(const nlohmann::json& doc, const std::string& file,
                                          std::vector<std::string>& errors) {
  const std::size_t before = errors.size();
  if (!doc.is_object()) {
    errors.push_back(file + ":: expected a JSON object (gpuplan-probe --nccl-out output)");
    return std::nullopt;
  }
  FieldReader top(doc, file, "", errors);
  if (auto schema = top.string("schema", false); schema && *schema != "gpuplan-nccl/1" &&
                                                  *schema != "gpuplan-profile/1")
    top.error("schema", "expected \"gpuplan-nccl/1\" or \"gpuplan-profile/1\", got \"" + *schema + "\"");
  NcclMeasurement m;
  m.file = file;
  m.gpu_id = top.string("gpu_id", false).value_or("unknown");
  m.measured_on = top.string("measured_on", false).value_or("");
  auto sec = top.object("nccl", true);
  if (!sec) return std::nullopt;
  m.nccl_version = sec->string("nccl_version", false).value_or("");
  if (auto g = sec->number("gpus", true, true)) {
    if (*g != static_cast<double>(static_cast<int>(*g)))
      sec->error("gpus", "must be a positive integer, got " + sec->json()["gpus"].dump());
    m.gpus = static_cast<int>(*g);
  }
  if (sec->has("check_failures") && sec->json()["check_failures"].is_array())
    for (const auto& f : sec->json()["check_failures"]) m.check_failures.push_back(f.dump());
  if (!sec->has("ops")) sec->error("ops", "expected an object of collectives, got nothing");
  else parse_ops(sec->json()["ops"], file, "/nccl/ops", m, errors);
  if (errors.size() != before) return std::nullopt;
  // No row at all measured nothing: `calibrate comm` said "collectives over one GPU move no data" and exit 0 for an
  // 8-GPU file whose ops were {} or empty arrays.
  std::size_t rows = 0;
  for (const auto& [op, r] : m.ops) rows += r.size();
  if (rows == 0) {
    errors.push_back(file + ":/nccl/ops: expected at least one collective with measured rows (bytes, time_us), "
                            "got none");
    return std::nullopt;
  }
  return m;
}

std::optional<NcclMeasurement> load_nccl(const std::string& path, std::vector<std::string>& errors) {
  auto doc = read_json_file(path, "NCCL measurement", errors);
  if (!doc) return std::nullopt;
  return parse_nccl(*doc, path, errors);
}

}  // namespace gp::calibrate
