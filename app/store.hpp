// The results store: every `gpuplan run` is recorded in an SQLite database (default ./gpuplan.db) so that a
// planner can find a run again (`gpuplan history`), compare runs of the same scenario (by its SHA-256) and query
// key figures with plain SQL. Schema and guarantees: docs/output.md, section "Results store".
//
// Guarantees: WAL journal (readers never block the writer), one transaction per run (a run is recorded whole or
// not at all), a busy timeout so that concurrent `gpuplan run` processes on one file all succeed, prepared
// statements with bound parameters only, and a schema version (PRAGMA user_version, mirrored in `meta`) that
// open() migrates forward. Expected failures (unreadable file, not a database, newer schema) are values: the
// functions return nullopt / empty and set *error to one line naming the file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace gp::app {

// Where `gpuplan run` and `gpuplan history` look when --db is not given (relative to the working directory).
inline constexpr const char* kDefaultDbPath = "gpuplan.db";

// Schema version written by this build; open() migrates older stores up to it and refuses newer ones.
inline constexpr int kStoreSchemaVersion = 2;

// One configuration of a run. inputs_json and results_json must be valid JSON text (enforced by the schema).
struct StoredConfig {
  std::string config_id;     // e.g. "c0007"; non-empty and unique within its run
  std::string inputs_json;   // the concrete configuration (JSON text)
  std::string results_json;  // its results (JSON text, the documented per-configuration object)
  int gpus = 0;              // >= 0
  std::string instance;
  double step_time_s = 0, time_to_train_h = 0, cost_usd = 0;  // NaN is stored as NULL and read back as NaN
  bool fits = true;
  std::string bottleneck;

  bool operator==(const StoredConfig&) const = default;
};

struct StoredRun {
  std::int64_t id = 0;     // assigned by the store; ignored by record_run
  std::string created_at;  // UTC ISO-8601 ("2026-12-02T09:03:12Z"), assigned by the store when empty
  std::string scenario_path, scenario_text;
  std::string scenario_sha256;  // hex; computed from scenario_text by the store when empty
  std::string gpuplan_version;  // this build's version when empty
  std::string command;          // the command line that produced the run
  // SHA-256 over the catalogs and profiles the run read (app/cmd_run.cpp, inputs_digest): two runs of one scenario
  // with different prices or profiles differ here. Empty for runs recorded before schema version 2.
  std::string inputs_sha256;
  std::vector<StoredConfig> configs;  // read back in the order they were recorded
};

// One line of `gpuplan history`.
struct RunSummary {
  std::int64_t id;
  std::string created_at, scenario_path, scenario_sha256, gpuplan_version;
  int configs;           // number of configurations recorded
  double best_cost_usd;  // lowest cost_usd among configurations that fit; NaN when none fits
  std::string best_config;  // its config_id; "" when none fits
};

// SQLite results store; one object per open database file. Move-only; closes the file when destroyed.
// Not safe to share between threads: give each thread (or process) its own Store on the same file.
class Store {
 public:
  // Opens or creates the database; WAL mode; creates/migrates the schema (schema version in PRAGMA user_version
  // and a `meta` table). Refuses an SQLite file that holds other tables (not a gpuplan store) and one with a
  // newer schema. On failure returns std::nullopt and sets *error to one line naming the file.
  static std::optional<Store> open(const std::string& path, std::string* error);
  // Opens an existing store read-only: never creates, migrates or changes the file (for `gpuplan history`).
  // Reads a store of any schema version from 1 to kStoreSchemaVersion as it is (a version-1 run reads back with
  // an empty inputs_sha256). Fails (one line naming the file) when the file is missing, not a database, not a
  // gpuplan store, or from a newer gpuplan.
  static std::optional<Store> open_existing(const std::string& path, std::string* error);

  // Records a run and its configurations in ONE transaction; returns the new run id. On failure nothing of
  // the run remains in the store, *error says why, and the Store stays usable.
  std::optional<std::int64_t> record_run(const StoredRun& run, std::string* error);
  // Newest (most recently recorded) first; at most `limit` runs, all when limit <= 0.
  // On failure returns {} and sets *error (which is cleared on success).
  std::vector<RunSummary> list_runs(int limit, std::string* error) const;
  // The run with its configurations; nullopt with *error = "FILE: no run with id N" when there is none.
  std::optional<StoredRun> get_run(std::int64_t id, std::string* error) const;

  [[nodiscard]] const std::string& path() const { return path_; }

  Store(Store&&) noexcept = default;
  Store& operator=(Store&&) noexcept = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store() = default;

 private:
  struct Closer {
    void operator()(sqlite3* db) const noexcept;
  };
  Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  bool configure(bool read_only, std::string* error);
  bool migrate(std::string* error);
  bool exec(const char* sql, const char* what, std::string* error) const;
  [[nodiscard]] std::string failure(const std::string& what) const;  // "FILE: what: sqlite message"

  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
  std::int64_t version_ = kStoreSchemaVersion;  // schema of the open file; below current only via open_existing
};

// SHA-256 of `data` as 64 lowercase hex digits (FIPS 180-4). O(size).
std::string sha256_hex(const std::string& data);

}  // namespace gp::app
