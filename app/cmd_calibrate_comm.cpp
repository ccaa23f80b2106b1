#include "app/cmd_calibrate_comm.hpp"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "app/catalog_io.hpp"
#include "app/output_file.hpp"
#include "calibrate/json_text.hpp"
#include "calibrate/nccl_fit.hpp"
#include "calibrate/nccl_io.hpp"

namespace gp::app {

namespace {

struct CommCalOptions {
  std::string nccl;
  std::string instance;
  std::string format = "table";
  std::string fit_out;
  double tolerance = 10.0;
};

int bad(const std::string& msg) {
  std::cerr << "gpuplan calibrate comm: " << msg << "\n";
  return kExitBadInput;
}

// The instance's intra-node link, checked against the measurement's GPU count.
const InterconnectSpec* intra_link(const Catalog& cat, const CommCalOptions& o, int gpus, const std::string& gpu_id,
                                   std::string& err) {
  const InstanceSpec* inst = Catalog::find(cat.instances, o.instance);
  if (!inst) {
    err = "unknown instance \"" + o.instance + "\" (see `gpuplan catalog list instances`)";
    return nullptr;
  }
  // The probe stores --gpu-id as given ("unknown" without it): another catalog GPU's collectives held to this
  // node's link were compared without a word (an H100 file against an H200 instance).
  if (gpu_id != inst->gpu && Catalog::find(cat.gpus, gpu_id)) {
    err = o.nccl + ":/gpu_id: measured on \"" + gpu_id + "\", but instance \"" + inst->id + "\" has \"" + inst->gpu +
          "\" (expected an instance of the measured GPU, see `gpuplan catalog list instances`)";
    return nullptr;
  }
  if (gpus > inst->gpus) {
    err = o.nccl + " was measured on " + std::to_string(gpus) + " GPUs; instance \"" + inst->id + "\" has " +
          std::to_string(inst->gpus);
    return nullptr;
  }
  if (inst->intra_node.empty()) {
    err = "instance \"" + inst->id + "\" has no intra-node interconnect";
    return nullptr;
  }
  const InterconnectSpec* s = Catalog::find(cat.interconnects, inst->intra_node);
  if (!s) err = "instance \"" + inst->id + "\" names unknown interconnect \"" + inst->intra_node + "\"";
  return s;
}

int write_fit(const std::string& path, const nlohmann::ordered_json& j) {
  if (const auto problem = write_output_file(path, calibrate::dump_json(j, 2) + "\n", "the fit")) {
    std::cout << calibrate::dump_json(j, 2) << "\n";  // nothing lost: the fit goes to standard output instead
    return bad(*problem + " (printed on standard output instead)");
  }
  return kExitOk;
}

int run(const CommCalOptions& o, CliContext& ctx) {
  if (!(o.tolerance > 0)) return bad("--tolerance must be a positive percentage");
  if (!o.fit_out.empty()) {
    std::vector<std::string> inputs = catalog_input_files(ctx);  // --instance / --gpu read the catalogs
    inputs.push_back(o.nccl);
    if (const auto problem = output_problem(o.fit_out, "the fit", inputs)) return bad(*problem);
  }
  std::vector<std::string> errors;
  const auto m = calibrate::load_nccl(o.nccl, errors);
  for (const auto& e : errors) std::cerr << e << "\n";
  if (!m) return kExitBadInput;
  // The probe's exact result checks failed (nccl-tests' #wrong): these are times of collectives that computed wrong
  // results. They were read and compared as if valid, without a word.
  if (!m->check_failures.empty())
    return bad(o.nccl + ":/nccl/check_failures: expected none, got " + std::to_string(m->check_failures.size()) +
               " (first: " + m->check_failures.front() +
               "): the collectives returned wrong results, so their times say nothing of the link; rerun the probe");
  const auto cat = load_catalogs_or_report(ctx);
  if (!cat) return kExitBadInput;
  std::string err;
  const InterconnectSpec* intra = intra_link(*cat, o, m->gpus, m->gpu_id, err);
  if (!intra) return bad(err);
  const collective::Topology t = calibrate::single_node_topology(*intra, m->gpus);
  if (auto problem = collective::check(t)) return bad(*problem);
  const auto cal = calibrate::calibrate_comm(*m, t, Bytes::mib(64), o.tolerance);
  if (o.format == "json") std::cout << calibrate::dump_json(calibrate::render_comm_json(cal, *m), 2) << "\n";
  else std::cout << calibrate::render_comm_table(cal, *m);
  if (!o.fit_out.empty()) {
    if (const int rc = write_fit(o.fit_out, calibrate::comm_fit_json(cal, *m, intra->id)); rc != kExitOk)
      return rc;
  }
  if (cal.rows.empty()) return kExitOk;  // one GPU: a self-test, nothing to hold the model to
  // Without an all-reduce of 64 MiB or more the acceptance has nothing to judge: it said "0 sizes ... FAIL", exit
  // 1, as if the model had drifted.
  if (cal.summary.allreduce_large_rows == 0)
    return bad(o.nccl + ":/nccl/ops/all_reduce: expected all-reduce rows of 64 MiB or more, got none: the "
               "acceptance (all-reduce busbw at >= 64 MiB) is not judged");
  return cal.summary.pass ? kExitOk : kExitCheckFailed;
}

}  // namespace

void add_calibrate_comm_command(CLI::App* calibrate, CliContext& ctx) {
  auto o = std::make_shared<CommCalOptions>();
  auto* cmd = calibrate->add_subcommand(
      "comm", "Compare measured NCCL collectives (gpuplan-probe --nccl-only) with the collective model; fit it");
  cmd->add_option("--nccl", o->nccl, "measured collectives JSON (gpuplan-nccl/1)")->check(non_empty())->required()->type_name("FILE");
  cmd->add_option("--instance", o->instance, "catalog instance whose intra-node link the GPUs share")
      ->required()
      ->type_name("ID");
  cmd->add_option("--format", o->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--tolerance", o->tolerance, "all-reduce busbw tolerance at >= 64 MiB, percent (default 10)")
      ->check(finite_range(0.001, 1e6));
  cmd->add_option("--fit-out", o->fit_out, "write the fitted latency/efficiency per algorithm here (JSON)")->check(non_empty())
      ->type_name("FILE");
  cmd->callback([o, &ctx] { ctx.exit_code = run(*o, ctx); });
  add_calibrate_ddp_command(calibrate, ctx);
}

}  // namespace gp::app
