#include "sim/step_sim.hpp"

#include <algorithm>
#include <cmath>
#include <coroutine>
#include <memory>
#include <optional>
#include <utility>
#include <string>

#include "sim/cpu_pool.hpp"
#include "sim/engine.hpp"
#include "sim/order_stats.hpp"
#include "sim/random.hpp"
#include "sim/shared_bandwidth.hpp"

namespace gp::sim {

namespace {

// Coroutines waiting for a condition; notify() resumes them (as events now) so that they re-check it.
class Signal {
 public:
  explicit Signal(Simulator& sim) : sim_(&sim) {}
  void notify() {
    if (waiters_.empty()) return;
    std::vector<std::coroutine_handle<>> w;
    w.swap(waiters_);
    for (auto h : w) sim_->schedule_in(SimTime{0}, [h] { h.resume(); });
  }
  struct Awaiter {
    Signal* s;
    [[nodiscard]] bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const { s->waiters_.push_back(h); }
    void await_resume() const noexcept {}
  };
  [[nodiscard]] Awaiter wait() { return {this}; }

 private:
  Simulator* sim_;
  std::vector<std::coroutine_handle<>> waiters_;
};

struct Node {
  Node(Simulator& sim, const ClusterShape& c, ByteRate uplink) {
    if (c.cpu_cores > 0) cpu = std::make_unique<CpuPool>(sim, c.cpu_cores);
    const int switches = (c.ranks_per_node + c.gpus_per_pcie_switch - 1) / c.gpus_per_pcie_switch;
    if (uplink.value() > 0) {
      for (int i = 0; i < switches; ++i) pcie.push_back(std::make_unique<SharedBandwidth>(sim, uplink));
    }
  }
  std::unique_ptr<CpuPool> cpu;
  std::vector<std::unique_ptr<SharedBandwidth>> pcie;
};

// One step's gradient collectives (or a barrier) shared by every simulated rank.
struct StepGroup {
  std::vector<SimTime> start, duration;  // per arrival: backward start and its duration
  int arrived = 0;
  std::optional<SimTime> end;
  double hidden = 0;                     // mean over ranks of collective time inside their backward (s)
};

struct Shared;

struct Rank {
  int id = 0;          // global rank
  int local = 0;       // index within its node
  int node_index = 0;
  Node* node = nullptr;
  bool proxy = false;  // stands for the slowest of the ranks outside the simulated node
  bool traced = false;
  Rng rng{1};
  // loader state
  std::vector<char> worker_done, ready;
  std::vector<char> issued;  // num_workers == 0: the training process has issued this batch's GPU work
  std::int64_t consumed = 0;
  std::unique_ptr<Signal> slot_sig, done_sig, ready_sig, issue_sig;
  // per measured step accumulators
  std::vector<double> compute, stall, gpu, hidden, fb, bubble;  // seconds per step (fb: forward + backward)
};

struct Shared {
  const StepSimInput* in = nullptr;
  const StepSimOptions* opt = nullptr;
  Simulator* sim = nullptr;
  int total_steps = 0;
  int sim_ranks = 0;
  std::vector<StepGroup> grads, params;  // per step (grads per micro-batch with CommWork::every_micro_batch)
  std::unique_ptr<Signal> group_sig;
  std::vector<SimTime> step_end;         // per step: latest end over ranks
  int finished = 0;
  std::vector<const Rank*> traced;       // ranks whose spans are recorded
  std::int64_t others = 1;  // ranks the straggler proxy stands for
  std::vector<TraceSpan> trace;

  void span(const Rank& r, const char* name, TraceLane lane, SimTime start, SimTime dur, int step) {
    if (!r.traced || step >= opt->trace_steps || dur <= 0) return;
    trace.push_back(TraceSpan{name, r.node_index, r.id, lane, start, dur, step});
  }
};

SimTime ns(Seconds s) { return to_sim_time(s); }

// FSDP / ZeRO-3 forward of one micro-batch: L units, each needing its all-gather (one comm stream,
// gathers prefetched back to back) before its compute. Returns the phase's duration.
// `spans`, when given, receives each collective as (start, end, name) relative to the phase's start (for --trace).
struct CommSpan {
  SimTime begin, end;
  const char* name;
};

SimTime sharded_forward(SimTime compute, const CommWork& c, std::vector<CommSpan>* spans = nullptr) {
  const int L = c.layer_units;
  const SimTime unit = compute / L, ag = ns(c.unit_allgather);
  SimTime comm = 0, comp = 0;
  for (int i = 0; i < L; ++i) {
    if (spans) spans->push_back({comm, comm + ag, "parameter all-gather"});
    comm += ag;
    comp = std::max(comp, comm) + unit;
  }
  return std::max(comp, compute);
}

// Backward: units in reverse; before each unit's compute its re-gather, after it the reduce-scatter of
// its gradients; the gather of the next unit is issued before that reduce-scatter (prefetch).
SimTime sharded_backward(SimTime compute, const CommWork& c, std::vector<CommSpan>* spans = nullptr) {
  const int L = c.layer_units;
  const SimTime unit = compute / L, ag = ns(c.unit_allgather), rs = ns(c.unit_reduce_scatter);
  SimTime comm = ag, comp = 0, ag_end = ag;
  if (spans) spans->push_back({0, ag, "parameter all-gather"});
  for (int i = L - 1; i >= 0; --i) {
    SimTime next_ag_end = 0;
    if (i > 0) {
      if (spans) spans->push_back({comm, comm + ag, "parameter all-gather"});
      comm += ag;
      next_ag_end = comm;
    }
    comp = std::max(comp, ag_end) + unit;
    const SimTime rs_begin = std::max(comm, comp);
    comm = rs_begin + rs;
    if (spans) spans->push_back({rs_begin, comm, "gradient reduce-scatter"});
    ag_end = next_ag_end;
  }
  return std::max({comp, comm, compute});
}

// End of the gradient collectives of one step, once every rank has started its last backward; also
// records how much of the collectives' time fell inside each rank's backward (hidden by overlap).
SimTime bucket_chain_end(StepGroup& g, const CommWork& c, std::vector<std::pair<SimTime, SimTime>>* spans) {
  const std::size_t nb = c.grad_buckets.size();
  SimTime t = 0;
  double hidden = 0;
  for (std::size_t k = 0; k < nb; ++k) {
    SimTime ready = 0;
    for (std::size_t r = 0; r < g.start.size(); ++r) {
      const double frac = c.overlap ? static_cast<double>(k + 1) / static_cast<double>(nb) : 1.0;
      ready = std::max(ready, g.start[r] + static_cast<SimTime>(std::llround(frac * static_cast<double>(g.duration[r]))));
    }
    const SimTime begin = std::max(t, ready);
    t = begin + ns(c.grad_buckets[k]);
    if (spans) spans->emplace_back(begin, t);
    for (std::size_t r = 0; r < g.start.size(); ++r) {
      const SimTime inside = std::min(t, g.start[r] + g.duration[r]) - begin;
      if (inside > 0) hidden += to_seconds(inside).value();
    }
  }
  g.hidden = g.start.empty() ? 0.0 : hidden / static_cast<double>(g.start.size());
  return t;
}

Process worker_loop(Simulator& sim, Shared* sh, Rank* r, int w) {
  const LoaderWork& L = sh->in->loader;
  const std::int64_t q = static_cast<std::int64_t>(L.prefetch_factor) * L.num_workers;
  const auto n = static_cast<std::int64_t>(r->ready.size());
  for (std::int64_t b = w; b < n; b += L.num_workers) {
    while (b >= r->consumed + q) co_await r->slot_sig->wait();
    const SimTime t0 = sim.now();
    const Seconds work = Seconds(L.batch_cpu.value() * lognormal_factor(r->rng, L.batch_cpu_cv)) + L.collate_cpu;
    if (r->node->cpu) {
      co_await r->node->cpu->work(work);
    } else {
      co_await sim.delay(work);
    }
    const int step = static_cast<int>(b / sh->in->grad_accum);
    sh->span(*r, "worker batch", TraceLane::cpu, t0, sim.now() - t0, step);
    r->worker_done[static_cast<std::size_t>(b)] = 1;
    if (!L.pin_memory) r->ready[static_cast<std::size_t>(b)] = 1;
    r->done_sig->notify();
    if (!L.pin_memory) r->ready_sig->notify();
  }
}

Process pin_loop(Simulator& sim, Shared* sh, Rank* r) {
  const LoaderWork& L = sh->in->loader;
  for (std::size_t b = 0; b < r->ready.size(); ++b) {
    while (!r->worker_done[b]) co_await r->done_sig->wait();
    if (r->node->cpu) {
      co_await r->node->cpu->work(L.pin_cpu);
    } else {
      co_await sim.delay(L.pin_cpu);
    }
    r->ready[b] = 1;
    r->ready_sig->notify();
  }
}

// num_workers == 0: the training process loads batch b once it has issued batch b-1's kernels. CUDA runs
// them asynchronously, so this load overlaps the GPU's work on the previous batch; the host-to-device copy
// that follows waits for the GPU (a synchronous .to(device)), which the rank loop does.
Process inline_loader(Simulator& sim, Shared* sh, Rank* r) {
  const LoaderWork& L = sh->in->loader;
  for (std::size_t b = 0; b < r->ready.size(); ++b) {
    if (b > 0) {
      while (!r->issued[b - 1]) co_await r->issue_sig->wait();
    }
    const SimTime t0 = sim.now();
    const Seconds work =
        Seconds(L.batch_cpu.value() * lognormal_factor(r->rng, L.batch_cpu_cv)) + (L.pin_memory ? L.pin_cpu : Seconds(0));
    if (r->node->cpu) {
      co_await r->node->cpu->work(work);
    } else {
      co_await sim.delay(work);
    }
    sh->span(*r, "load batch (main process)", TraceLane::cpu, t0, sim.now() - t0,
             static_cast<int>(static_cast<std::int64_t>(b) / sh->in->grad_accum));
    r->ready[b] = 1;
    r->ready_sig->notify();
  }
}

Process rank_loop(Simulator& sim, Shared* sh, Rank* r) {
  const StepSimInput& in = *sh->in;
  const LoaderWork& L = in.loader;
  const ComputeWork& C = in.compute;
  const CommWork& K = in.comm;
  const int m = in.grad_accum;
  const int warm = sh->total_steps - sh->opt->steps;
  const std::int64_t others = sh->others;
  // A rank's noise factor covers its optimizer and the next forward/backward: the stretch between two
  // collectives that decides who is last, so the straggler proxy's maximum matches the full simulation.
  auto draw = [&] { return r->proxy ? max_lognormal_factor(r->rng, C.step_cv, others) : lognormal_factor(r->rng, C.step_cv); };
  double f_next = draw();
  // The gradient group of a micro-batch: one a step, after its last micro-batch, or one per micro-batch when every
  // micro-batch reduces its gradients (CommWork::every_micro_batch).
  auto group = [&](int s, int k) -> StepGroup& {
    return sh->grads[K.every_micro_batch ? static_cast<std::size_t>(s) * static_cast<std::size_t>(m) +
                                               static_cast<std::size_t>(k)
                                         : static_cast<std::size_t>(s)];
  };
  for (int s = 0; s < sh->total_steps; ++s) {
    const double f = f_next;
    double compute = 0, stall = 0, gpu = 0, hidden = 0;
    SimTime fwd_sum = 0, bwd_sum = 0;
    SimTime slot_sum = 0;  // a stage's whole time per micro-batch: phases with their blocking collectives and sends
    for (int k = 0; k < m; ++k) {
      const auto b = static_cast<std::size_t>(s) * static_cast<std::size_t>(m) + static_cast<std::size_t>(k);
      const SimTime t0 = sim.now();
      if (!L.synthetic) {
        while (!r->ready[b]) co_await r->ready_sig->wait();
        if (L.num_workers > 0) {
          ++r->consumed;
          r->slot_sig->notify();
        }
        sh->span(*r, "wait batch", TraceLane::input, t0, sim.now() - t0, s);
        const SimTime t1 = sim.now();
        if (!L.pin_memory && L.pageable_staging_cpu.value() > 0) {
          if (r->node->cpu) {
            co_await r->node->cpu->work(L.pageable_staging_cpu);
          } else {
            co_await sim.delay(L.pageable_staging_cpu);
          }
        }
        if (!r->node->pcie.empty() && L.batch_bytes.value() > 0) {
          auto& link = *r->node->pcie[static_cast<std::size_t>(r->local / in.cluster.gpus_per_pcie_switch)];
          co_await link.transfer(L.batch_bytes, L.h2d_pinned);
        }
        sh->span(*r, "host-to-device copy", TraceLane::input, t1, sim.now() - t1, s);
      }
      stall += to_seconds(sim.now() - t0).value();
      // CPU share of the training process: it is a permanent thread of the pool when workers run,
      // otherwise it joins the pool's runnable threads while it issues.
      double share = 1.0;
      if (r->node->cpu) share = r->node->cpu->share_per_thread(L.num_workers > 0 ? 0 : 1);
      const SimTime gf = ns(C.gpu_forward * f), gb = ns(C.gpu_backward * f);
      const SimTime cf = ns(C.cpu_forward * (f / share)), cb = ns(C.cpu_backward * (f / share));
      const SimTime pf = std::max(gf, cf);
      const SimTime pb = std::max(gb, cb);
      if (!L.synthetic && L.num_workers == 0) {
        // The training process is free to load the next batch once it has issued this one's kernels
        // (the optimizer's too on the last micro-batch).
        SimTime issue = cf + cb;
        if (k == m - 1) issue += ns(C.cpu_optimizer * (f / share));
        sim.schedule_in(issue, [r, b] {
          r->issued[b] = 1;
          r->issue_sig->notify();
        });
      }
      SimTime df = pf + ns(K.tp_forward), db = pb + ns(K.tp_backward);
      std::vector<CommSpan> fwd_comm, bwd_comm;  // filled only for the traced ranks' traced steps
      const bool trace_comm = r->traced && s < sh->opt->trace_steps;
      if (K.layer_units > 0) {
        df = sharded_forward(pf, K, trace_comm ? &fwd_comm : nullptr) + ns(K.tp_forward);
        db = sharded_backward(pb, K, trace_comm ? &bwd_comm : nullptr) + ns(K.tp_backward);
      }
      fwd_sum += pf;
      bwd_sum += pb;
      slot_sum += df + db;
      if (K.layer_units > 0) {
        // Sharded units: collective time minus what the phases exposed beyond their compute.
        const double comm = (K.unit_allgather * 2.0 + K.unit_reduce_scatter).value() * K.layer_units;
        const double exposed = to_seconds(df - pf + db - pb).value() - (K.tp_forward + K.tp_backward).value();
        hidden += std::max(0.0, comm - exposed);
      }
      sh->span(*r, "forward", TraceLane::gpu, sim.now(), df, s);
      for (const auto& c : fwd_comm) sh->span(*r, c.name, TraceLane::comm, sim.now() + c.begin, c.end - c.begin, s);
      co_await sim.delay(df);
      if ((k == m - 1 || K.every_micro_batch) && !K.grad_buckets.empty()) {
        StepGroup& g = group(s, k);
        g.start.push_back(sim.now());
        g.duration.push_back(db);
        if (++g.arrived == sh->sim_ranks) {
          std::vector<std::pair<SimTime, SimTime>> spans;
          const bool trace = s < sh->opt->trace_steps && !sh->traced.empty();
          g.end = bucket_chain_end(g, K, trace ? &spans : nullptr);
          for (const Rank* t : sh->traced) {
            for (const auto& [b, e] : spans) sh->span(*t, "gradient collective", TraceLane::comm, b, e - b, s);
          }
          sh->group_sig->notify();
        }
      }
      sh->span(*r, "backward", TraceLane::gpu, sim.now(), db, s);
      for (const auto& c : bwd_comm) sh->span(*r, c.name, TraceLane::comm, sim.now() + c.begin, c.end - c.begin, s);
      co_await sim.delay(db);
      if (K.every_micro_batch && k < m - 1 && !K.grad_buckets.empty()) {
        // backward() returns only when the reducer has all-reduced this micro-batch's buckets.
        StepGroup& g = group(s, k);
        const SimTime t0 = sim.now();
        while (!g.end) co_await sh->group_sig->wait();
        if (*g.end > sim.now()) co_await sim.delay(*g.end - sim.now());
        sh->span(*r, "wait gradients", TraceLane::gpu, t0, sim.now() - t0, s);
        hidden += g.hidden;
      }
      if (K.pp_stages > 1 && K.pp_p2p.value() > 0) {
        sh->span(*r, "pipeline send/recv", TraceLane::comm, sim.now(), ns(K.pp_p2p), s);
        co_await sim.delay(K.pp_p2p);
        slot_sum += ns(K.pp_p2p);
      }
      compute += to_seconds(pf + pb).value();
      gpu += to_seconds(gf + gb).value();
    }
    if (!K.grad_buckets.empty()) {
      StepGroup& g = group(s, m - 1);
      const SimTime t0 = sim.now();
      while (!g.end) co_await sh->group_sig->wait();
      if (*g.end > sim.now()) co_await sim.delay(*g.end - sim.now());
      sh->span(*r, "wait gradients", TraceLane::gpu, t0, sim.now() - t0, s);
      hidden += g.hidden;
    }
    SimTime bubble = 0;
    if (K.pp_stages > 1) {
      // 1F1B: (stages - 1) forward+backward slots of idle time per step on every stage. A slot is what one
      // micro-batch takes on a stage, its blocking tensor-parallel all-reduces (and exposed parameter gathers)
      // and its pipeline send included: the fill and drain wait on the other stages' whole slots, not on
      // their compute alone (counting compute only left tp's all-reduces out of (stages - 1) slots).
      bubble = (K.pp_stages - 1) * slot_sum / m;
      sh->span(*r, "pipeline bubble", TraceLane::gpu, sim.now(), bubble, s);
      co_await sim.delay(bubble);
    }
    double share = 1.0;
    if (r->node->cpu) share = r->node->cpu->share_per_thread(L.num_workers > 0 ? 0 : 1);
    f_next = draw();
    const SimTime go = ns(C.gpu_optimizer * f_next);
    const SimTime po = std::max(go, ns(C.cpu_optimizer * (f_next / share)));
    sh->span(*r, "optimizer", TraceLane::gpu, sim.now(), po, s);
    co_await sim.delay(po);
    compute += to_seconds(po).value();
    gpu += to_seconds(go).value();
    if (K.after_optimizer.value() > 0) {
      StepGroup& g = sh->params[static_cast<std::size_t>(s)];
      g.start.push_back(sim.now());
      if (++g.arrived == sh->sim_ranks) {
        g.end = *std::max_element(g.start.begin(), g.start.end()) + ns(K.after_optimizer);
        sh->group_sig->notify();
      }
      const SimTime t0 = sim.now();
      while (!g.end) co_await sh->group_sig->wait();
      if (*g.end > sim.now()) co_await sim.delay(*g.end - sim.now());
      sh->span(*r, "parameter all-gather", TraceLane::comm, t0, sim.now() - t0, s);
    }
    auto& end = sh->step_end[static_cast<std::size_t>(s)];
    end = std::max(end, sim.now());
    if (s >= warm) {
      r->compute.push_back(compute);
      r->stall.push_back(stall);
      r->gpu.push_back(gpu);
      r->hidden.push_back(hidden);
      r->fb.push_back(to_seconds(fwd_sum + bwd_sum).value());
      r->bubble.push_back(to_seconds(bubble).value());
    }
  }
  if (++sh->finished == sh->sim_ranks) sim.stop();
}

int default_warmup(const StepSimInput& in) {
  if (in.loader.synthetic || in.loader.num_workers == 0) return 3;
  const int q = in.loader.prefetch_factor * in.loader.num_workers;
  return 5 + (q + in.grad_accum - 1) / in.grad_accum;
}

}  // namespace

StepSimResult simulate_steps(const StepSimInput& in, const StepSimOptions& opt) {
  StepSimResult res;
  Simulator sim;
  Shared sh;
  sh.in = &in;
  sh.opt = &opt;
  sh.sim = &sim;
  const int warm = opt.warmup_steps >= 0 ? opt.warmup_steps : default_warmup(in);
  // The simulation walks every micro-batch: a long accumulation measures fewer steps, each of them averaging
  // over its many micro-batches (kMicroBatchBudget in all; 200 steps up to grad_accum 100).
  const int measured = std::max(1, std::min(opt.steps, kMicroBatchBudget / std::max(1, in.grad_accum)));
  sh.total_steps = warm + measured;
  res.measured_steps = measured;
  const auto g = static_cast<int>(std::min<std::int64_t>(in.cluster.ranks_per_node, in.cluster.ranks));
  const std::int64_t nodes_total = (in.cluster.ranks + g - 1) / g;
  const bool full = opt.force_full || in.cluster.ranks <= opt.full_ranks_limit;
  // Shortcut: one node in detail; with one GPU per node a second node holds the straggler proxy, so that
  // the mean rank is not the proxy.
  const int sim_nodes = full ? static_cast<int>(nodes_total) : (g == 1 ? 2 : 1);
  res.shortcut = !full && nodes_total > 1;

  ClusterShape shape = in.cluster;
  shape.ranks_per_node = g;
  const ByteRate uplink = in.loader.synthetic ? ByteRate(0) : in.loader.h2d_pinned;
  std::vector<std::unique_ptr<Node>> nodes;
  for (int n = 0; n < sim_nodes; ++n) nodes.push_back(std::make_unique<Node>(sim, shape, uplink));

  std::vector<std::unique_ptr<Rank>> ranks;
  SplitMix64 seeds(opt.seed);
  for (int n = 0; n < sim_nodes; ++n) {
    const int here = static_cast<int>(std::min<std::int64_t>(g, in.cluster.ranks - static_cast<std::int64_t>(n) * g));
    for (int l = 0; l < here; ++l) {
      auto r = std::make_unique<Rank>();
      r->id = n * g + l;
      r->local = l;
      r->node_index = n;
      r->node = nodes[static_cast<std::size_t>(n)].get();
      r->rng = Rng(seeds.next());
      r->proxy = res.shortcut && n == sim_nodes - 1 && l == here - 1;
      r->traced = opt.trace_steps > 0 && (r->id < opt.trace_max_ranks || r->proxy);
      ranks.push_back(std::move(r));
    }
  }
  sh.sim_ranks = static_cast<int>(ranks.size());
  for (const auto& r : ranks) {
    if (r->traced) sh.traced.push_back(r.get());
  }
  sh.others = in.cluster.ranks - sh.sim_ranks + 1;
  res.simulated_ranks = sh.sim_ranks;
  sh.grads.resize(static_cast<std::size_t>(sh.total_steps) *
                  static_cast<std::size_t>(in.comm.every_micro_batch ? std::max(1, in.grad_accum) : 1));
  sh.params.resize(static_cast<std::size_t>(sh.total_steps));
  sh.step_end.assign(static_cast<std::size_t>(sh.total_steps), 0);
  sh.group_sig = std::make_unique<Signal>(sim);

  const auto batches = static_cast<std::size_t>(sh.total_steps) * static_cast<std::size_t>(in.grad_accum);
  for (auto& r : ranks) {
    r->slot_sig = std::make_unique<Signal>(sim);
    r->done_sig = std::make_unique<Signal>(sim);
    r->ready_sig = std::make_unique<Signal>(sim);
    r->issue_sig = std::make_unique<Signal>(sim);
    if (!in.loader.synthetic) {
      r->worker_done.assign(batches, 0);
      r->ready.assign(batches, 0);
      r->issued.assign(batches, 0);
    }
  }
  for (auto& node : nodes) {
    if (!node->cpu) continue;
    // Training processes of the node's GPUs: a busy main loop each when workers do the loading.
    if (!in.loader.synthetic && in.loader.num_workers > 0) {
      for (int l = 0; l < g; ++l) node->cpu->add_permanent_thread();
    }
  }
  for (auto& r : ranks) {
    if (!in.loader.synthetic && in.loader.num_workers > 0) {
      for (int w = 0; w < in.loader.num_workers; ++w) worker_loop(sim, &sh, r.get(), w);
      if (in.loader.pin_memory) pin_loop(sim, &sh, r.get());
    } else if (!in.loader.synthetic) {
      inline_loader(sim, &sh, r.get());
    }
  }
  for (auto& r : ranks) rank_loop(sim, &sh, r.get());
  sim.run();
  res.events = sim.events_executed();

  // Step statistics over the measured steps.
  std::vector<double> steps;
  for (int s = warm; s < sh.total_steps; ++s) {
    const SimTime prev = s == 0 ? 0 : sh.step_end[static_cast<std::size_t>(s - 1)];
    steps.push_back(to_seconds(sh.step_end[static_cast<std::size_t>(s)] - prev).value());
  }
  double total = 0;
  for (double x : steps) total += x;
  const auto ns_steps = static_cast<double>(steps.size());
  res.step_time = Seconds(total / ns_steps);
  std::vector<double> sorted = steps;
  std::sort(sorted.begin(), sorted.end());
  res.step_p90 = Seconds(sorted[static_cast<std::size_t>(0.9 * (ns_steps - 1))]);

  // Mean over ranks (the straggler proxy stands for one rank only when others are simulated).
  double comp = 0, stall = 0, gpu = 0, straggle = 0, hidden = 0, bubble = 0;
  int counted = 0;
  for (auto& r : ranks) {
    if (r->proxy && ranks.size() > 1) continue;
    for (std::size_t i = 0; i < r->compute.size(); ++i) {
      comp += r->compute[i];
      stall += r->stall[i];
      gpu += r->gpu[i];
      hidden += r->hidden[i];
      bubble += r->bubble[i];
    }
    ++counted;
  }
  const double denom = ns_steps * counted;
  comp /= denom;
  stall /= denom;
  gpu /= denom;
  hidden /= denom;
  bubble /= denom;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    double mx = 0, mean = 0;
    int n = 0;
    for (auto& r : ranks) {
      mx = std::max(mx, r->fb[i]);
      if (r->proxy && ranks.size() > 1) continue;  // the mean rank is one of the ordinary ones
      mean += r->fb[i];
      ++n;
    }
    mean /= n;
    straggle += mx - mean;
  }
  res.straggler = Seconds(straggle / ns_steps);
  // Waiting at a collective for a rank that was late because its own input was late is input time, not
  // communication: per step, the mean rank's wait for the last one to arrive (the excess of the latest rank's
  // own work, input wait plus compute, over the mean rank's) goes to the input in the proportion that the latest
  // rank's input wait, rather than its compute, exceeds the mean. Without this a data-bound single node (an
  // all-reduce of 0.1 ms) was called communication-bound, with advice to change bucket sizes.
  double sync_input = 0;
  if (!in.loader.synthetic && ranks.size() > 1) {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      double mean_s = 0, mean_c = 0, late = -1, late_s = 0, late_c = 0;
      int n = 0;
      for (auto& r : ranks) {
        const double own = r->stall[i] + r->compute[i];
        if (own > late) {
          late = own;
          late_s = r->stall[i];
          late_c = r->compute[i];
        }
        if (r->proxy) continue;
        mean_s += r->stall[i];
        mean_c += r->compute[i];
        ++n;
      }
      mean_s /= n;
      mean_c /= n;
      const double excess_s = std::max(0.0, late_s - mean_s), excess_c = std::max(0.0, late_c - mean_c);
      if (excess_s > 0) sync_input += (late - mean_s - mean_c) * excess_s / (excess_s + excess_c);
    }
    sync_input /= ns_steps;
  }
  // Conservation: the parts add up to the step time; waits the rank did not see in its own phases
  // (stragglers elsewhere, collectives) are exposed communication.
  const double st = res.step_time.value();
  if (comp + stall > st) {
    const double k = st / (comp + stall);
    comp *= k;
    stall *= k;
  }
  stall += std::clamp(sync_input, 0.0, st - comp - stall);
  res.compute = Seconds(comp);
  res.dataloader_stall = Seconds(stall);
  res.comm_exposed = Seconds(std::max(0.0, st - comp - stall));
  res.gpu_busy = Seconds(gpu);
  res.comm_hidden = Seconds(hidden);
  res.pipeline_bubble = Seconds(bubble);
  Seconds comm;
  for (Seconds b : in.comm.grad_buckets) comm += b * (in.comm.every_micro_batch ? in.grad_accum : 1);
  comm += in.comm.after_optimizer;
  comm += (in.comm.tp_forward + in.comm.tp_backward + in.comm.pp_p2p) * in.grad_accum;
  comm += (in.comm.unit_allgather * 2 + in.comm.unit_reduce_scatter) * (in.comm.layer_units * in.grad_accum);
  res.comm_total = comm;
  res.trace = std::move(sh.trace);
  return res;
}

}  // namespace gp::sim
