// The results store (app/store.hpp) and `gpuplan history` (app/cmd_history.hpp). Expected values are
// FIPS 180-2 test vectors, sha256sum(1) output, and figures chosen by hand in the runs written here; SQLite
// state is checked through a separate raw sqlite3 connection, not through the store.
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "app/cmd_history.hpp"
#include "app/store.hpp"

namespace fs = std::filesystem;
using gp::app::Store;
using gp::app::StoredConfig;
using gp::app::StoredRun;

namespace {

// A unique path under the temp folder; the file and its -wal/-shm companions are removed at scope exit.
class TempDb {
 public:
  TempDb() {
    static std::atomic<int> counter{0};
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = (fs::temp_directory_path() / ("gpuplan-store-test-" + std::to_string(::getpid()) + "-" +
                                          std::to_string(counter++) + "-" + std::to_string(stamp) + ".db"))
                .string();
  }
  ~TempDb() {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path_ + suffix, ec);
  }
  TempDb(const TempDb&) = delete;
  TempDb& operator=(const TempDb&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// First column of the first row of `sql`, read through an independent connection.
std::string raw_query(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  std::string out = "<error>";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
      const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      out = t == nullptr ? "<null>" : t;
    }
    sqlite3_finalize(st);
  }
  sqlite3_close_v2(db);
  return out;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

StoredConfig config(std::string id, int gpus, double cost, bool fits) {
  StoredConfig c;
  c.config_id = std::move(id);
  c.inputs_json = R"({"cluster":{"gpus":)" + std::to_string(gpus) + "}}";
  c.results_json = R"({"gpus":)" + std::to_string(gpus) + R"(,"fits":)" + (fits ? "true" : "false") + "}";
  c.gpus = gpus;
  c.instance = "p5.48xlarge";
  c.step_time_s = 0.25 * gpus;
  c.time_to_train_h = 10.0 / gpus;
  c.cost_usd = cost;
  c.fits = fits;
  c.bottleneck = fits ? "compute" : "memory";
  return c;
}

// Costs chosen so that the cheapest configuration (c0002) does not fit: the best is c0003 at $200.
StoredRun three_config_run(const std::string& scenario) {
  StoredRun run;
  run.scenario_path = scenario;
  run.scenario_text = "{ \"name\": \"" + scenario + "\" }\n";
  run.command = "gpuplan run " + scenario;
  run.configs = {config("c0001", 8, 300.0, true), config("c0002", 16, 100.0, false),
                 config("c0003", 32, 200.0, true)};
  return run;
}

Store open_or_fail(const std::string& path) {
  std::string error;
  auto store = Store::open(path, &error);
  INFO(error);
  REQUIRE(store.has_value());
  return std::move(*store);
}

// A store holding one run of three_config_run, taken back to schema version 1 as a store of 2026-12-06 was: no
// inputs_sha256 column, user_version 1.
void make_version1_store(const std::string& path) {
  {
    Store store = open_or_fail(path);
    std::string error;
    REQUIRE(store.record_run(three_config_run("old.json"), &error));
  }
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "ALTER TABLE runs DROP COLUMN inputs_sha256; PRAGMA user_version = 1", nullptr, nullptr,
                       nullptr) == SQLITE_OK);
  sqlite3_close_v2(db);
}

}  // namespace

TEST_CASE("app::store: SHA-256 FIPS 180-2 test vectors", "[app][store]") {
  using gp::app::sha256_hex;
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("app::store: SHA-256 at padding boundaries matches sha256sum", "[app][store]") {
  // 55 bytes is the longest message padded within one block; 56..63 need a second padding block.
  const std::vector<std::pair<std::size_t, std::string>> cases = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"}};
  for (const auto& [n, hex] : cases) {
    INFO(n << " x 'a'");
    CHECK(gp::app::sha256_hex(std::string(n, 'a')) == hex);
  }
}

TEST_CASE("app::store: a run with 3 configurations reads back equal", "[app][store]") {
  TempDb tmp;
  Store store = open_or_fail(tmp.path());
  StoredRun run = three_config_run("scenarios/llm.json");
  run.created_at = "2026-12-02T09:00:00Z";
  run.configs[1].step_time_s = std::numeric_limits<double>::quiet_NaN();  // NULL in SQL, NaN again on read
  std::string error;
  const auto id = store.record_run(run, &error);
  INFO(error);
  REQUIRE(id.has_value());

  const auto back = store.get_run(*id, &error);
  REQUIRE(back.has_value());
  CHECK(back->id == *id);
  CHECK(back->created_at == run.created_at);
  CHECK(back->scenario_path == run.scenario_path);
  CHECK(back->scenario_text == run.scenario_text);
  CHECK(back->scenario_sha256 == gp::app::sha256_hex(run.scenario_text));  // filled in when empty
  CHECK(back->gpuplan_version == GPUPLAN_VERSION);                         // filled in when empty
  CHECK(back->command == run.command);
  REQUIRE(back->configs.size() == 3);
  CHECK(std::isnan(back->configs[1].step_time_s));
  auto expected = run.configs;
  auto got = back->configs;
  expected[1].step_time_s = got[1].step_time_s = 0;  // NaN != NaN; checked above
  CHECK(got == expected);

  // The key figures are plain SQL columns.
  CHECK(raw_query(tmp.path(), "SELECT count(*) FROM configs WHERE fits = 1 AND cost_usd < 250") == "1");
  CHECK(raw_query(tmp.path(), "SELECT sum(gpus) FROM configs") == "56");
}

TEST_CASE("app::store: created_at defaults to the current UTC time", "[app][store]") {
  TempDb tmp;
  Store store = open_or_fail(tmp.path());
  std::string error;
  // SQLite's own clock, an independent source of UTC time, read before and after the run is recorded: the
  // stored time lies between them (ISO 8601 at one-second resolution sorts as text).
  const std::string before = raw_query(tmp.path(), "SELECT strftime('%Y-%m-%dT%H:%M:%SZ', 'now')");
  const auto id = store.record_run(three_config_run("a.json"), &error);
  REQUIRE(id.has_value());
  const std::string after = raw_query(tmp.path(), "SELECT strftime('%Y-%m-%dT%H:%M:%SZ', 'now')");
  const auto back = store.get_run(*id, &error);
  REQUIRE(back.has_value());
  REQUIRE(back->created_at.size() == 20);
  CHECK(before <= back->created_at);
  CHECK(back->created_at <= after);
  CHECK(back->created_at.back() == 'Z');
}

TEST_CASE("app::store: history lists runs newest first with their best configuration", "[app][store]") {
  TempDb tmp;
  Store store = open_or_fail(tmp.path());
  std::string error;
  std::vector<std::int64_t> ids;
  for (const char* name : {"first.json", "second.json", "third.json"}) {
    ids.push_back(store.record_run(three_config_run(name), &error).value_or(-1));
  }
  StoredRun none_fit = three_config_run("fourth.json");
  for (auto& c : none_fit.configs) c.fits = false;
  ids.push_back(store.record_run(none_fit, &error).value_or(-1));

  const auto all = store.list_runs(0, &error);
  REQUIRE(error.empty());
  REQUIRE(all.size() == 4);
  CHECK(all[0].scenario_path == "fourth.json");
  CHECK(all[3].scenario_path == "first.json");
  for (std::size_t i = 0; i < 4; ++i) CHECK(all[i].id == ids[3 - i]);
  CHECK(all[1].configs == 3);
  CHECK(all[1].best_cost_usd == 200.0);  // c0002 is cheaper but does not fit
  CHECK(all[1].best_config == "c0003");
  CHECK(std::isnan(all[0].best_cost_usd));
  CHECK(all[0].best_config.empty());

  const auto two = store.list_runs(2, &error);
  REQUIRE(two.size() == 2);
  CHECK(two[0].scenario_path == "fourth.json");
  CHECK(two[1].scenario_path == "third.json");
}

TEST_CASE("app::store: schema version and WAL mode are set", "[app][store]") {
  TempDb tmp;
  {
    Store store = open_or_fail(tmp.path());
  }
  CHECK(raw_query(tmp.path(), "PRAGMA user_version") == std::to_string(gp::app::kStoreSchemaVersion));
  CHECK(raw_query(tmp.path(), "SELECT value FROM meta WHERE key = 'schema_version'") ==
        std::to_string(gp::app::kStoreSchemaVersion));
  CHECK(raw_query(tmp.path(), "PRAGMA journal_mode") == "wal");
  // Reopening an up-to-date store changes nothing and still works.
  Store again = open_or_fail(tmp.path());
  std::string error;
  CHECK(again.list_runs(0, &error).empty());
  CHECK(error.empty());
}

TEST_CASE("app::store: a version-1 store is migrated and keeps its runs, which have no inputs digest", "[app][store]") {
  TempDb tmp;
  std::string error;
  make_version1_store(tmp.path());
  REQUIRE(raw_query(tmp.path(), "PRAGMA user_version") == "1");
  Store store = open_or_fail(tmp.path());
  CHECK(raw_query(tmp.path(), "PRAGMA user_version") == "2");
  auto fresh = three_config_run("new.json");
  fresh.inputs_sha256 = std::string(64, 'a');
  const auto id = store.record_run(fresh, &error);
  REQUIRE(id);
  const auto old_run = store.get_run(1, &error);
  const auto new_run = store.get_run(*id, &error);
  REQUIRE(old_run);
  REQUIRE(new_run);
  CHECK(old_run->scenario_path == "old.json");
  CHECK(old_run->configs.size() == 3);
  CHECK(old_run->inputs_sha256.empty());
  CHECK(new_run->inputs_sha256 == std::string(64, 'a'));
}

TEST_CASE("app::store: a run that fails midway leaves nothing behind", "[app][store]") {
  TempDb tmp;
  Store store = open_or_fail(tmp.path());
  std::string error;
  REQUIRE(store.record_run(three_config_run("good.json"), &error).has_value());

  SECTION("duplicate configuration id") {
    StoredRun bad = three_config_run("bad.json");
    bad.configs[2].config_id = bad.configs[0].config_id;  // violates PRIMARY KEY (run_id, config_id)
    CHECK_FALSE(store.record_run(bad, &error).has_value());
    CHECK(error.find(tmp.path()) == 0);
    CHECK(error.find("c0001") != std::string::npos);
  }
  SECTION("results that are not JSON") {
    StoredRun bad = three_config_run("bad.json");
    bad.configs[1].results_json = "{ not json";
    CHECK_FALSE(store.record_run(bad, &error).has_value());
    CHECK(error.find(tmp.path()) == 0);
  }
  SECTION("negative GPU count") {
    StoredRun bad = three_config_run("bad.json");
    bad.configs[2].gpus = -4;
    CHECK_FALSE(store.record_run(bad, &error).has_value());
  }
  CHECK(error.find('\n') == std::string::npos);
  CHECK(raw_query(tmp.path(), "SELECT count(*) FROM runs") == "1");
  CHECK(raw_query(tmp.path(), "SELECT count(*) FROM configs") == "3");
  CHECK(raw_query(tmp.path(), "SELECT count(*) FROM runs WHERE scenario_path = 'bad.json'") == "0");
  // The store is still usable: the failed transaction was rolled back, not left open.
  CHECK(store.record_run(three_config_run("after.json"), &error).has_value());
  CHECK(raw_query(tmp.path(), "SELECT count(*) FROM runs") == "2");
}

TEST_CASE("app::store: user text is bound, never spliced into SQL", "[app][store]") {
  TempDb tmp;
  Store store = open_or_fail(tmp.path());
  StoredRun run = three_config_run("x'); DROP TABLE runs; --.json");
  run.command = "gpuplan run 'quoted' \"double\" ; --";
  std::string error;
  const auto id = store.record_run(run, &error);
  REQUIRE(id.has_value());
  const auto back = store.get_run(*id, &error);
  REQUIRE(back.has_value());
  CHECK(back->scenario_path == run.scenario_path);
  CHECK(back->command == run.command);
}

TEST_CASE("app::store: two writers at once both succeed", "[app][store]") {
  TempDb tmp;
  { Store init = open_or_fail(tmp.path()); }
  constexpr int kRunsEach = 25;
  std::atomic<int> failures{0};
  auto writer = [&](const std::string& name) {
    std::string error;
    auto store = Store::open(tmp.path(), &error);  // its own connection, as another process would have
    if (!store) {
      ++failures;
      return;
    }
    for (int i = 0; i < kRunsEach; ++i) {
      if (!store->record_run(three_config_run(name), &error)) ++failures;
    }
  };
  std::thread a(writer, "a.json");
  std::thread b(writer, "b.json");
  a.join();
  b.join();
  CHECK(failures == 0);
  CHECK(raw_query(tmp.path(), "SELECT count(*) FROM runs") == std::to_string(2 * kRunsEach));
  CHECK(raw_query(tmp.path(), "SELECT count(*) FROM configs") == std::to_string(6 * kRunsEach));
}

namespace {
std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
}  // namespace

TEST_CASE("app::store: opening a file that is not a store gives one clean line", "[app][store]") {
  TempDb tmp;
  std::string error;
  SECTION("text file") {
    write_file(tmp.path(), "this is a scenario, not a database\n");
    CHECK_FALSE(Store::open(tmp.path(), &error).has_value());
  }
  SECTION("4 KiB of binary garbage") {
    std::string junk(4096, '\0');
    for (std::size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 131 + 7) % 251);
    write_file(tmp.path(), junk);
    CHECK_FALSE(Store::open(tmp.path(), &error).has_value());
    CHECK_FALSE(Store::open_existing(tmp.path(), &error).has_value());
  }
  SECTION("an SQLite database of another program is left alone") {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(tmp.path().c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "CREATE TABLE invoices (n INTEGER)", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
    const std::string before = file_bytes(tmp.path());
    CHECK_FALSE(Store::open(tmp.path(), &error).has_value());
    // Byte for byte: the refused file was switched to WAL first (header bytes 18-19 went from 1 to 2).
    CHECK(file_bytes(tmp.path()) == before);
    CHECK_FALSE(fs::exists(tmp.path() + "-wal"));
    CHECK(raw_query(tmp.path(), "SELECT count(*) FROM sqlite_schema") == "1");
  }
  SECTION("a store from a newer gpuplan") {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(tmp.path().c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
    const std::string before = file_bytes(tmp.path());
    CHECK_FALSE(Store::open(tmp.path(), &error).has_value());
    CHECK(file_bytes(tmp.path()) == before);
    CHECK(error.find("99") != std::string::npos);
  }
  SECTION("a directory") {
    fs::create_directory(tmp.path());
    CHECK_FALSE(Store::open(tmp.path(), &error).has_value());
  }
  INFO(error);
  CHECK(error.find(tmp.path()) == 0);
  CHECK(error.find('\n') == std::string::npos);
}

TEST_CASE("app::store: open_existing never creates a file", "[app][store]") {
  TempDb tmp;
  std::string error;
  CHECK_FALSE(Store::open_existing(tmp.path(), &error).has_value());
  CHECK(error.find(tmp.path()) == 0);
  CHECK_FALSE(fs::exists(tmp.path()));
}

// ---- gpuplan history ----

namespace {
struct HistoryOutput {
  int code;
  std::string out, err;
};
HistoryOutput history(gp::app::HistoryOptions opts) {
  std::ostringstream out, err;
  const int code = gp::app::run_history(opts, out, err);
  return {code, out.str(), err.str()};
}
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}
}  // namespace

TEST_CASE("app::store: history of a missing database says so and exits 0", "[app][store][history]") {
  TempDb tmp;
  const auto r = history({tmp.path(), 20, "table", std::nullopt});
  CHECK(r.code == 0);
  CHECK(r.out == "no runs recorded in " + tmp.path() + "\n");
  CHECK_FALSE(fs::exists(tmp.path()));
}

TEST_CASE("app::store: history of a corrupt database is one line and exit 2", "[app][store][history]") {
  TempDb tmp;
  write_file(tmp.path(), std::string(2048, 'x'));
  const auto r = history({tmp.path(), 20, "table", std::nullopt});
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  REQUIRE(lines_of(r.err).size() == 1);
  CHECK(r.err.find(tmp.path()) == 0);
}

TEST_CASE("app::store: history table is aligned, newest first, within 100 columns", "[app][store][history]") {
  TempDb tmp;
  {
    Store store = open_or_fail(tmp.path());
    std::string error;
    store.record_run(three_config_run("scenarios/first.json"), &error);
    const std::string long_path = "/very/long/folder/name/that/goes/on/and/on/" + std::string(80, 'd') + "/x.json";
    store.record_run(three_config_run(long_path), &error);
  }
  const auto r = history({tmp.path(), 20, "table", std::nullopt});
  REQUIRE(r.code == 0);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 3);  // header and two runs
  for (const auto& l : lines) CHECK(l.size() <= 100);
  CHECK(lines[1].find("...") != std::string::npos);  // the long path was cut...
  CHECK(lines[1].find("/x.json") != std::string::npos);  // ...keeping its end
  CHECK(lines[2].find("scenarios/first.json") != std::string::npos);
  CHECK(lines[1].find("$200") != std::string::npos);
  CHECK(lines[1].find("c0003") != std::string::npos);
  // Aligned: the column after the scenario starts at the same offset on every line.
  const std::size_t configs_end = lines[0].find("CONFIGS") + 7;  // right-aligned column
  for (std::size_t i = 1; i < lines.size(); ++i) {
    REQUIRE(lines[i].size() > configs_end);
    CHECK(lines[i][configs_end - 1] == '3');
    CHECK(lines[i][configs_end] == ' ');
  }
}

TEST_CASE("app::store: history JSON and --show", "[app][store][history]") {
  TempDb tmp;
  std::int64_t id = 0;
  {
    Store store = open_or_fail(tmp.path());
    std::string error;
    store.record_run(three_config_run("one.json"), &error);
    id = store.record_run(three_config_run("two.json"), &error).value_or(0);
  }
  const auto list = history({tmp.path(), 0, "json", std::nullopt});
  REQUIRE(list.code == 0);
  const auto j = nlohmann::json::parse(list.out);
  REQUIRE(j["runs"].size() == 2);
  CHECK(j["runs"][0]["id"] == id);
  CHECK(j["runs"][0]["scenario_path"] == "two.json");
  CHECK(j["runs"][0]["best_cost_usd"] == 200.0);
  CHECK(j["runs"][0]["best_config"] == "c0003");
  CHECK(j["runs"][0]["configs"] == 3);

  const auto shown = history({tmp.path(), 20, "json", id});
  REQUIRE(shown.code == 0);
  const auto run = nlohmann::json::parse(shown.out);
  CHECK(run["scenario_path"] == "two.json");
  REQUIRE(run["configs"].size() == 3);
  CHECK(run["configs"][2]["id"] == "c0003");
  CHECK(run["configs"][2]["inputs"]["cluster"]["gpus"] == 32);  // stored JSON comes back as JSON
  CHECK(run["configs"][1]["results"]["fits"] == false);

  const auto table = history({tmp.path(), 20, "table", id});
  REQUIRE(table.code == 0);
  for (const auto& l : lines_of(table.out)) CHECK(l.size() <= 100);
  CHECK(table.out.find("c0002") != std::string::npos);

  const auto missing = history({tmp.path(), 20, "table", id + 100});
  CHECK(missing.code == 2);
  CHECK(lines_of(missing.err).size() == 1);
}

TEST_CASE("app::store: history --show keeps three digits of a short job's time, as run printed it",
          "[app][store][history]") {
  TempDb tmp;
  std::int64_t id = 0;
  {
    Store store = open_or_fail(tmp.path());
    StoredRun run = three_config_run("short.json");
    // 20 steps of 0.4413 s plus 5.286 s of start-up: 14.112 s = 14.112 / 3600 h = 0.00392 h; run's table prints
    // 0.00392 (three significant digits). Fixed two decimals printed 0.00, losing the figure.
    run.configs[0].step_time_s = 0.4413;
    run.configs[0].time_to_train_h = 14.112 / 3600;
    run.configs[0].cost_usd = 12345.6;  // run's table: $12.3k (thousands to one decimal), not $12,346
    std::string error;
    id = store.record_run(run, &error).value_or(0);
  }
  const auto shown = history({tmp.path(), 20, "table", id});
  REQUIRE(shown.code == 0);
  const auto rows = lines_of(shown.out);
  const auto row = std::find_if(rows.begin(), rows.end(), [](const std::string& l) { return l.rfind("c0001", 0) == 0; });
  REQUIRE(row != rows.end());
  INFO(*row);
  CHECK(row->find(" 0.00392 ") != std::string::npos);
  CHECK(row->find(" 0.441 ") != std::string::npos);  // 0.4413 s in three digits
  CHECK(row->find(" $12.3k ") != std::string::npos);  // the cost as run printed it
}

TEST_CASE("app::store: history reads a version-1 store without migrating it", "[app][store][history]") {
  TempDb tmp;
  make_version1_store(tmp.path());  // which `history` of a newer gpuplan must still read
  const auto list = history({tmp.path(), 0, "json", std::nullopt});
  INFO(list.err);
  REQUIRE(list.code == 0);
  const auto j = nlohmann::json::parse(list.out);
  REQUIRE(j["runs"].size() == 1);
  CHECK(j["runs"][0]["best_config"] == "c0003");  // c0002 ($100) does not fit; c0003 $200 < c0001 $300
  const auto shown = history({tmp.path(), 20, "json", 1});
  INFO(shown.err);
  REQUIRE(shown.code == 0);
  const auto run = nlohmann::json::parse(shown.out);
  CHECK(run["scenario_path"] == "old.json");
  CHECK(run["inputs_sha256"] == "");
  CHECK(run["configs"].size() == 3);
  // Read only: still version 1 and no inputs_sha256 column.
  CHECK(raw_query(tmp.path(), "PRAGMA user_version") == "1");
  CHECK(raw_query(tmp.path(), "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'inputs_sha256'") == "0");
}

TEST_CASE("app::store: history refuses a store of a newer gpuplan, saying so", "[app][store][history]") {
  TempDb tmp;
  {
    Store store = open_or_fail(tmp.path());
    std::string error;
    REQUIRE(store.record_run(three_config_run("new.json"), &error));
  }
  REQUIRE(raw_query(tmp.path(), "PRAGMA user_version") == "2");
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(tmp.path().c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close_v2(db);
  }
  const auto list = history({tmp.path(), 0, "table", std::nullopt});
  CHECK(list.code == 2);
  REQUIRE(lines_of(list.err).size() == 1);
  CHECK(list.err.find(tmp.path()) == 0);
  CHECK(list.err.find("newer") != std::string::npos);
}
