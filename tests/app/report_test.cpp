// The run table's number format, by hand: three significant digits after rounding.
#include <catch2/catch.hpp>

#include "app/report.hpp"

#include <limits>
#include <optional>

using gp::app::sig3;

namespace {

// One configuration that fits on an H200, gpu-compute bound: a step of 0.1 s and the given time to train and cost,
// each with a zero-width range.
gp::app::ConfigOutcome fitting(double hours, double usd) {
  gp::app::ConfigOutcome c;
  c.job.id = "c0000";
  c.job.cluster.gpu.id = "h200-sxm";
  c.result.fits = true;
  c.result.bottleneck = "gpu-compute";
  c.result.step_time = c.result.step_time_p10 = c.result.step_time_p90 = gp::Seconds(0.1);
  c.result.time_to_train = c.result.time_to_train_p10 = c.result.time_to_train_p90 = gp::Seconds(hours * 3600.0);
  c.result.cost = c.result.cost_p10 = c.result.cost_p90 = gp::Dollars(usd);
  return c;
}

}  // namespace

TEST_CASE("app::report: sig3 keeps three significant digits, rounding before it picks the format") {
  CHECK(sig3(0.0123) == "0.0123");
  CHECK(sig3(0.00812) == "0.00812");
  CHECK(sig3(0.000123) == "1.23e-04");
  CHECK(sig3(1.234) == "1.23");
  CHECK(sig3(12.34) == "12.3");
  CHECK(sig3(123.4) == "123");
  CHECK(sig3(12345) == "12300");
  CHECK(sig3(1.234e6) == "1.23M");
  CHECK(sig3(45.64e9) == "45.6G");
  CHECK(sig3(789.4e12) == "789T");
  CHECK(sig3(0) == "0.000");
  // Figures that round up across a boundary take the next format (they printed "1000M", "100.00", "10.00" and
  // "1000000" before), and figures below 0.1 keep three digits (0.0123 printed "0.012").
  CHECK(sig3(999.96e6) == "1.00G");
  CHECK(sig3(99.996) == "100");
  CHECK(sig3(9.996) == "10.0");
  CHECK(sig3(999999.6) == "1.00M");
  CHECK(sig3(0.99996) == "1.00");
  CHECK(sig3(0.009996) == "0.0100");
  CHECK(sig3(0.0999996) == "0.100");
  // Past 1e15 (a job that failures all but stop: 6.57e20 h in a planner's audit printed "6.57e+20", one character
  // wider than the table's time column) the exponent goes without its sign and leading zeros.
  CHECK(sig3(6.5714e20) == "6.57e20");
  CHECK(sig3(1.0e15) == "1.00e15");
  CHECK(sig3(9.9996e17) == "1.00e18");
  CHECK(sig3(0.000123) == "1.23e-04");  // small figures keep the C form
  // Dollars the same way (12,345.6 = 12.3 thousand; 2.6e12 = 2.60 trillion; past 1e15 sig3's form with a $).
  CHECK(gp::app::usd_text(12345.6) == "$12.3k");
  CHECK(gp::app::usd_text(2.6e12) == "$2.60T");
  CHECK(gp::app::usd_text(4.1634e22) == "$4.16e22");
}

TEST_CASE("app::report: the table's heading ends without trailing spaces, its rule spans the columns") {
  const gp::app::ConfigOutcome c = fitting(1, 10);
  const std::string t = gp::app::render({c}, gp::app::Format::table, "", std::nullopt, 0);
  const std::size_t eol = t.find('\n');
  REQUIRE(eol != std::string::npos);
  const std::string head = t.substr(0, eol);
  CHECK(head.rfind("id", 0) == 0);
  CHECK(head.back() != ' ');
  const std::size_t eol2 = t.find('\n', eol + 1);
  const std::string rule = t.substr(eol + 1, eol2 - eol - 1);
  CHECK(rule.find_first_not_of('-') == std::string::npos);
  CHECK(rule.size() >= head.size());
  CHECK(rule.size() <= 100);  // readable at 100 columns
}

TEST_CASE("app::report: the recommendation gives its 80% range and warns when the slow end misses the deadline") {
  gp::app::ConfigOutcome c;
  c.job.id = "c0000";
  c.job.cluster.gpu.id = "h200-sxm";
  c.result.fits = true;
  c.result.bottleneck = "launch-overhead";
  c.result.time_to_train = gp::Seconds(10 * 3600.0);
  c.result.time_to_train_p10 = gp::Seconds(8 * 3600.0);
  c.result.time_to_train_p90 = gp::Seconds(13 * 3600.0);
  c.result.cost = gp::Dollars(100);
  c.result.cost_p10 = gp::Dollars(80);
  c.result.cost_p90 = gp::Dollars(130);
  c.result.step_time = gp::Seconds(0.1);
  c.result.step_time_p10 = gp::Seconds(0.08);
  c.result.step_time_p90 = gp::Seconds(0.13);
  const std::string nbsp = "\u00a0";
  // Deadline 12 h: the point (10 h) meets it, the 90th percentile (13 h) does not.
  const std::string md = gp::app::render({c}, gp::app::Format::md, "s", 12.0, 0);
  CHECK(md.find("$100, 10.0 h (80% range 8.00-13.0" + nbsp + "h, $80.00-$130).") != std::string::npos);
  CHECK(md.find("At the slow end of its range it takes 13.0 h, past the deadline.") != std::string::npos);
  // The Markdown table carries each configuration's step and cost ranges.
  CHECK(md.find("| 0.100 | 0.0800-0.130 |") != std::string::npos);
  CHECK(md.find("| $100 | $80.00-$130 |") != std::string::npos);
  // Deadline 14 h: met at both ends, no warning.
  CHECK(gp::app::render({c}, gp::app::Format::md, "s", 14.0, 0).find("past the deadline") == std::string::npos);
  // No range (a point): nothing added.
  c.result.time_to_train_p10 = c.result.time_to_train_p90 = c.result.time_to_train;
  CHECK(gp::app::render({c}, gp::app::Format::md, "s", 14.0, 0).find("h (80% range") == std::string::npos);
}

TEST_CASE("app::report: a sweep names what each configuration chose, by hand") {
  using nlohmann::json;
  // Three configurations of a hand-written sweep: a list of workloads (objects differing in two fields), a list
  // of pricing plans (objects with different fields) and the node count (shown in its own column).
  const std::vector<json> concrete = {
      json::parse(R"({"workload": {"model": "gpt-124m", "seq": 256, "micro_batch": 4},
                      "cluster": {"nodes": 1, "pricing": {"plan": "on-prem", "capex_per_node_usd": 310000, "pue": 1.2}}})"),
      json::parse(R"({"workload": {"model": "gpt-124m", "seq": 1024, "micro_batch": 16},
                      "cluster": {"nodes": 2, "pricing": {"plan": "on-prem", "capex_per_node_usd": 310000, "pue": 1.2}}})"),
      json::parse(R"({"workload": {"model": "gpt-124m", "seq": 256, "micro_batch": 4},
                      "cluster": {"nodes": 1, "pricing": {"plan": "on-demand", "price_per_gpu_hour": 6.88}}})")};
  const auto sweep = gp::app::sweep_values(concrete);
  REQUIRE(sweep.size() == 3);
  // Only the leaves that differ; the model (the same in all) is not one; an unset field is null.
  CHECK(sweep[0].size() == 7);
  CHECK(sweep[0].contains("workload.seq"));
  CHECK(!sweep[0].contains("workload.model"));
  CHECK(sweep[1]["workload.micro_batch"] == 16);
  CHECK(sweep[1]["cluster.nodes"] == 2);
  CHECK(sweep[2]["cluster.pricing.plan"] == "on-demand");
  CHECK(sweep[2]["cluster.pricing.pue"].is_null());
  CHECK(sweep[0]["cluster.pricing.price_per_gpu_hour"].is_null());
  const std::vector<std::string> dims = {"cluster.nodes", "cluster.pricing", "workload"};
  // nodes has its own column; the plan (a name) comes first; an object with more than two differing fields
  // set ends in "...".
  CHECK(gp::app::sweep_label(sweep[0], dims) == "plan=on-prem capex_per_node_usd=310000 ... micro_batch=4 seq=256");
  CHECK(gp::app::sweep_label(sweep[2], dims) == "plan=on-demand price_per_gpu_hour=6.88 micro_batch=4 seq=256");
  // One configuration: nothing swept, nothing to say.
  CHECK(gp::app::sweep_values({concrete[0]})[0].empty());
  CHECK(gp::app::sweep_label(gp::app::sweep_values({concrete[0]})[0], {}).empty());
}

TEST_CASE("app::report: the plot of time against cost joins the configurations no other beats and rings the pick") {
  // Four configurations by hand: a (10 h, $100), b (5 h, $150), c (12 h, $160: beaten by a on both), d (20 h, $90);
  // e does not fit. The Pareto front is b, a, d in time order; with a deadline of 11 h the cheapest that meets it is a.
  auto make = [](const std::string& id, double h, double usd, bool fits) {
    gp::app::ConfigOutcome c;
    c.job.id = id;
    c.job.cluster.gpu.id = "h200-sxm";
    c.result.fits = fits;
    c.result.bottleneck = fits ? "gpu-compute" : "out-of-memory";
    c.result.time_to_train = c.result.time_to_train_p10 = c.result.time_to_train_p90 = gp::Seconds(h * 3600);
    c.result.cost = c.result.cost_p10 = c.result.cost_p90 = gp::Dollars(usd);
    c.result.step_time = gp::Seconds(0.1);
    return c;
  };
  std::vector<gp::app::ConfigOutcome> all = {make("a", 10, 100, true), make("b", 5, 150, true),
                                             make("c", 12, 160, true), make("d", 20, 90, true),
                                             make("e<&>", 1, 1, false)};
  const std::string svg = gp::app::render_plot(all, "hand", 11.0);
  // The front in time order, c (beaten by a on both) not on it.
  CHECK(svg.find("<title>no other configuration is both faster and cheaper: b, a, d</title>") != std::string::npos);
  // The pick is ringed beside a; the deadline is drawn; what does not fit is named, escaped.
  CHECK(svg.find("cheapest within the deadline") != std::string::npos);
  CHECK(svg.find("deadline 11.0 h") != std::string::npos);
  CHECK(svg.find("not shown (does not fit, never finishes or not predicted): e&lt;&amp;&gt;") != std::string::npos);
  CHECK(svg.find("<title>e") == std::string::npos);
  // Times span 5-20 h and costs $90-$160: both under a factor of 10, so both axes are linear.
  CHECK(svg.find("log scale") == std::string::npos);
}

TEST_CASE("app::report: the plot names a job that never finishes among those it leaves out") {
  // Found by a planner's audit: a fitting configuration whose failures outpace its checkpoints (time to train
  // infinite, docs/output.md) was left out under "does not fit or not predicted", neither of which it is.
  gp::app::ConfigOutcome ok, never;
  ok.job.id = "ok";
  never.job.id = "never";
  for (auto* c : {&ok, &never}) {
    c->job.cluster.gpu.id = "h200-sxm";
    c->result.fits = true;
    c->result.bottleneck = "gpu-compute";
    c->result.step_time = gp::Seconds(0.1);
    c->result.cost = c->result.cost_p10 = c->result.cost_p90 = gp::Dollars(10);
    c->result.time_to_train = c->result.time_to_train_p10 = c->result.time_to_train_p90 = gp::Seconds(3600);
  }
  never.result.time_to_train = never.result.time_to_train_p10 = never.result.time_to_train_p90 =
      gp::Seconds(std::numeric_limits<double>::infinity());
  never.result.cost = never.result.cost_p10 = never.result.cost_p90 = gp::Dollars(std::numeric_limits<double>::infinity());
  const std::string svg = gp::app::render_plot({ok, never}, "hand", std::nullopt);
  CHECK(svg.find("not shown (does not fit, never finishes or not predicted): never") != std::string::npos);
  CHECK(svg.find("<title>never") == std::string::npos);
  CHECK(svg.find("<title>ok") != std::string::npos);
}

TEST_CASE("app::report: the Markdown report says when no configuration is recommended, as the table does") {
  // Found by a planner's audit: with a deadline no configuration met, the table said so and the Markdown report
  // ended after its table, silent on the recommendation. One configuration of 10 h against a deadline of 5 h.
  gp::app::ConfigOutcome c = fitting(10, 100);
  const std::string table = gp::app::render({c}, gp::app::Format::table, "s", 5.0, 0);
  const std::string md = gp::app::render({c}, gp::app::Format::md, "s", 5.0, 0);
  CHECK(table.find("No configuration fits and meets the deadline of 5.00 h.") != std::string::npos);
  CHECK(md.find("No configuration fits and meets the deadline of 5.00 h.") != std::string::npos);
  c.result.fits = false;  // and without a deadline, one that does not fit
  CHECK(gp::app::render({c}, gp::app::Format::md, "s", std::nullopt, 0).find("No configuration fits.") !=
        std::string::npos);
}
