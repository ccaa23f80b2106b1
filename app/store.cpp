#include "app/store.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <cmath>
#include <ctime>
#include <limits>

namespace gp::app {
namespace {

// Long enough for another `gpuplan run` to finish writing its run (one short transaction).
constexpr int kBusyTimeoutMs = 10000;

// Migration i takes a store from schema version i to i + 1. Static SQL only: no user data is ever spliced in.
constexpr std::array<const char*, kStoreSchemaVersion> kMigrations = {
    R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
);
CREATE TABLE runs (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at      TEXT NOT NULL,
  scenario_path   TEXT NOT NULL,
  scenario_text   TEXT NOT NULL,
  scenario_sha256 TEXT NOT NULL CHECK (length(scenario_sha256) = 64),
  gpuplan_version TEXT NOT NULL,
  command         TEXT NOT NULL
);
CREATE INDEX runs_by_scenario ON runs (scenario_sha256);
CREATE TABLE configs (
  run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq             INTEGER NOT NULL,
  config_id       TEXT NOT NULL CHECK (length(config_id) > 0),
  inputs_json     TEXT NOT NULL CHECK (json_valid(inputs_json)),
  results_json    TEXT NOT NULL CHECK (json_valid(results_json)),
  gpus            INTEGER NOT NULL CHECK (gpus >= 0),
  instance        TEXT NOT NULL,
  step_time_s     REAL,
  time_to_train_h REAL,
  cost_usd        REAL,
  fits            INTEGER NOT NULL CHECK (fits IN (0, 1)),
  bottleneck      TEXT NOT NULL,
  PRIMARY KEY (run_id, config_id),
  UNIQUE (run_id, seq)
);
CREATE INDEX configs_by_cost ON configs (run_id, fits, cost_usd);
)sql",
    // 2: what else the run read besides the scenario (catalogs, profiles), so that a run can be told apart from
    // one of the same scenario under other prices or profiles; '' for the runs recorded before.
    R"sql(
ALTER TABLE runs ADD COLUMN inputs_sha256 TEXT NOT NULL DEFAULT '';
)sql",
};

void set(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
}

// A prepared statement; bind errors are remembered and reported by step().
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  [[nodiscard]] bool prepared() const { return rc_ == SQLITE_OK && stmt_ != nullptr; }
  void bind(int i, const std::string& s) {
    keep(sqlite3_bind_text64(stmt_, i, s.data(), s.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bind(int i, std::int64_t v) { keep(sqlite3_bind_int64(stmt_, i, v)); }
  void bind(int i, double v) {  // SQLite turns NaN into NULL itself; be explicit
    keep(std::isnan(v) ? sqlite3_bind_null(stmt_, i) : sqlite3_bind_double(stmt_, i, v));
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return rc_ != SQLITE_OK ? rc_ : sqlite3_step(stmt_); }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    rc_ = SQLITE_OK;
  }
  [[nodiscard]] std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    if (p == nullptr) return {};
    return std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
  }
  [[nodiscard]] std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  [[nodiscard]] double real(int col) const {
    return sqlite3_column_type(stmt_, col) == SQLITE_NULL ? std::numeric_limits<double>::quiet_NaN()
                                                          : sqlite3_column_double(stmt_, col);
  }

 private:
  void keep(int rc) {
    if (rc_ == SQLITE_OK) rc_ = rc;
  }
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

std::string utc_now_iso8601() {
  // The system clock, not std::time: glibc's time() reads the coarse clock, up to a tick behind the one SQLite's
  // 'now' and every other timestamp read, so at a second's edge a run was stamped a second before it began.
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The single integer a statement such as "PRAGMA user_version" returns; nullopt on error.
std::optional<std::int64_t> query_int(sqlite3* db, const char* sql) {
  Stmt st(db, sql);
  if (!st.prepared() || st.step() != SQLITE_ROW) return std::nullopt;
  return st.integer(0);
}

// Why gpuplan will not use the file at `path` as its store (one line), given its user_version: a newer schema, or
// an SQLite database of another program (version 0 with tables). Nullopt when it may.
std::optional<std::string> refusal(sqlite3* db, std::int64_t version, const std::string& path) {
  if (version > kStoreSchemaVersion)
    return path + ": results store has schema version " + std::to_string(version) +
           ", newer than this gpuplan understands (" + std::to_string(kStoreSchemaVersion) + ")";
  if (version == 0 && query_int(db, "SELECT count(*) FROM sqlite_schema").value_or(1) != 0)
    return path + ": an SQLite database that is not a gpuplan results store (it holds other tables)";
  return std::nullopt;
}

}  // namespace

void Store::Closer::operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }

std::string Store::failure(const std::string& what) const {
  return path_ + ": " + what + ": " + (db_ ? sqlite3_errmsg(db_.get()) : "out of memory");
}

bool Store::exec(const char* sql, const char* what, std::string* error) const {
  if (sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr) == SQLITE_OK) return true;
  set(error, failure(what));
  return false;
}

std::optional<Store> Store::open(const std::string& path, std::string* error) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  Store store(raw, path);  // owns the handle even when opening failed
  if (rc != SQLITE_OK) {
    set(error, store.failure("cannot open results store"));
    return std::nullopt;
  }
  // SQLite opens a write-protected file read-only without a word; its first read would then leave -wal and -shm
  // files (owned by this user) beside a store that nothing can be written to.
  if (sqlite3_db_readonly(raw, "main") == 1) {
    set(error, path + ": cannot write results store: the file is read-only");
    return std::nullopt;
  }
  if (!store.configure(false, error) || !store.migrate(error)) return std::nullopt;
  return store;
}

namespace {
// "file:" URI of a path (RFC 3986 percent-encoding of what SQLite's URI parser would read otherwise).
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (const unsigned char ch : path) {
    if (std::isalnum(ch) || std::strchr("/-._~", ch) != nullptr) {
      uri += static_cast<char>(ch);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", ch);
      uri += buf;
    }
  }
  return uri;
}
}  // namespace

std::optional<Store> Store::open_existing(const std::string& path, std::string* error) {
  // Opened for writing (never created) when this user may write it, so that SQLite removes the -wal and -shm files
  // it makes when the connection closes; nothing is written. A store that this user may only read is opened
  // immutable: a read-only connection to a WAL store would leave those files behind, or fail in a read-only folder.
  const auto dir = std::filesystem::path(path).parent_path();
  const bool writable = ::access(path.c_str(), W_OK) == 0 && ::access(dir.empty() ? "." : dir.c_str(), W_OK) == 0;
  sqlite3* raw = nullptr;
  const int rc = writable ? sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr)
                          : sqlite3_open_v2((file_uri(path) + "?immutable=1").c_str(), &raw,
                                            SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  Store store(raw, path);
  if (rc != SQLITE_OK) {
    set(error, store.failure("cannot open results store"));
    return std::nullopt;
  }
  if (!store.configure(true, error)) return std::nullopt;
  const auto version = query_int(raw, "PRAGMA user_version");
  if (!version) {
    set(error, store.failure("cannot read results store"));
    return std::nullopt;
  }
  // An older store is read as it is (history never migrates): after an upgrade, `history` refused the runs of
  // every store that no `run` of the new gpuplan had written yet. Version 0 is an empty or foreign file.
  if (auto why = refusal(raw, *version, path)) {  // a newer gpuplan's store, another program's database
    set(error, std::move(*why));
    return std::nullopt;
  }
  if (*version < 1) {
    set(error, path + ": not a gpuplan results store (an SQLite database without its tables)");
    return std::nullopt;
  }
  store.version_ = *version;
  return store;
}

bool Store::configure(bool read_only, std::string* error) {
  sqlite3* db = db_.get();
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // The first statement reads the header: this is where a file that is not a database is detected.
  if (!query_int(db, "PRAGMA schema_version")) {
    set(error, failure("cannot read results store"));
    return false;
  }
  if (!exec("PRAGMA foreign_keys = ON", "cannot configure results store", error)) return false;
  if (read_only) return true;
  // A file this gpuplan will refuse (another program's database, a newer schema) is refused before anything is
  // written: switching it to WAL rewrote its header (bytes 18-19) although it was "left untouched".
  const auto version = query_int(db, "PRAGMA user_version");
  if (!version) {
    set(error, failure("cannot read schema version"));
    return false;
  }
  if (auto why = refusal(db, *version, path_)) {
    set(error, std::move(*why));
    return false;
  }
  Stmt wal(db, "PRAGMA journal_mode = WAL");
  if (!wal.prepared() || wal.step() != SQLITE_ROW) {
    set(error, failure("cannot switch results store to WAL mode"));
    return false;
  }
  if (wal.text(0) != "wal") {
    set(error, path_ + ": cannot switch results store to WAL mode (journal mode stays " + wal.text(0) + ")");
    return false;
  }
  return exec("PRAGMA synchronous = NORMAL", "cannot configure results store", error);
}

bool Store::migrate(std::string* error) {
  sqlite3* db = db_.get();
  auto version = query_int(db, "PRAGMA user_version");
  if (version == kStoreSchemaVersion) return true;  // the common case takes no write lock
  // IMMEDIATE: two processes creating the same new store serialise here, and the second sees version 1.
  if (!exec("BEGIN IMMEDIATE", "cannot lock results store", error)) return false;
  auto fail = [&](std::string message) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    set(error, std::move(message));
    return false;
  };
  version = query_int(db, "PRAGMA user_version");
  if (!version) return fail(failure("cannot read schema version"));
  // Checked again under the write lock: another program may have written the file since configure().
  if (auto why = refusal(db, *version, path_)) return fail(std::move(*why));
  for (auto v = *version; v < kStoreSchemaVersion; ++v) {
    if (sqlite3_exec(db, kMigrations[static_cast<std::size_t>(v)], nullptr, nullptr, nullptr) != SQLITE_OK) {
      return fail(failure("cannot migrate schema to version " + std::to_string(v + 1)));
    }
  }
  const std::string set_version = "PRAGMA user_version = " + std::to_string(kStoreSchemaVersion);  // a constant
  if (sqlite3_exec(db, set_version.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    return fail(failure("cannot set schema version"));
  }
  Stmt meta(db, "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?1), ('created_by', ?2)");
  meta.bind(1, std::to_string(kStoreSchemaVersion));
  meta.bind(2, std::string("gpuplan ") + GPUPLAN_VERSION);
  if (!meta.prepared() || meta.step() != SQLITE_DONE) return fail(failure("cannot write meta table"));
  if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return fail(failure("cannot commit schema"));
  }
  return true;
}

std::optional<std::int64_t> Store::record_run(const StoredRun& run, std::string* error) {
  sqlite3* db = db_.get();
  // IMMEDIATE takes the write lock up front, so a concurrent writer waits in the busy handler instead of
  // failing with SQLITE_BUSY when a read transaction would have to be upgraded.
  if (!exec("BEGIN IMMEDIATE", "cannot start transaction", error)) return std::nullopt;
  auto fail = [&](const std::string& what) -> std::optional<std::int64_t> {
    set(error, failure(what));
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return std::nullopt;
  };
  Stmt ins_run(db,
               "INSERT INTO runs (created_at, scenario_path, scenario_text, scenario_sha256, gpuplan_version, "
               "command, inputs_sha256) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  ins_run.bind(1, run.created_at.empty() ? utc_now_iso8601() : run.created_at);
  ins_run.bind(2, run.scenario_path);
  ins_run.bind(3, run.scenario_text);
  ins_run.bind(4, run.scenario_sha256.empty() ? sha256_hex(run.scenario_text) : run.scenario_sha256);
  ins_run.bind(5, run.gpuplan_version.empty() ? std::string(GPUPLAN_VERSION) : run.gpuplan_version);
  ins_run.bind(6, run.command);
  ins_run.bind(7, run.inputs_sha256);
  if (!ins_run.prepared() || ins_run.step() != SQLITE_DONE) return fail("cannot record run");
  const std::int64_t run_id = sqlite3_last_insert_rowid(db);

  Stmt ins_cfg(db,
               "INSERT INTO configs (run_id, seq, config_id, inputs_json, results_json, gpus, instance, "
               "step_time_s, time_to_train_h, cost_usd, fits, bottleneck) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  if (!ins_cfg.prepared()) return fail("cannot prepare configuration insert");
  for (std::size_t i = 0; i < run.configs.size(); ++i) {
    const StoredConfig& c = run.configs[i];
    ins_cfg.reset();
    ins_cfg.bind(1, run_id);
    ins_cfg.bind(2, static_cast<std::int64_t>(i));
    ins_cfg.bind(3, c.config_id);
    ins_cfg.bind(4, c.inputs_json);
    ins_cfg.bind(5, c.results_json);
    ins_cfg.bind(6, static_cast<std::int64_t>(c.gpus));
    ins_cfg.bind(7, c.instance);
    ins_cfg.bind(8, c.step_time_s);
    ins_cfg.bind(9, c.time_to_train_h);
    ins_cfg.bind(10, c.cost_usd);
    ins_cfg.bind(11, static_cast<std::int64_t>(c.fits ? 1 : 0));
    ins_cfg.bind(12, c.bottleneck);
    if (ins_cfg.step() != SQLITE_DONE) return fail("cannot record configuration '" + c.config_id + "'");
  }
  if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) return fail("cannot commit run");
  set(error, "");
  return run_id;
}

std::vector<RunSummary> Store::list_runs(int limit, std::string* error) const {
  Stmt st(db_.get(),
          "SELECT r.id, r.created_at, r.scenario_path, r.scenario_sha256, r.gpuplan_version, "
          "  (SELECT count(*) FROM configs c WHERE c.run_id = r.id), "
          "  b.cost_usd, b.config_id "
          "FROM runs r LEFT JOIN configs b ON b.run_id = r.id AND b.seq = "
          "  (SELECT c.seq FROM configs c WHERE c.run_id = r.id AND c.fits = 1 AND c.cost_usd IS NOT NULL "
          "   ORDER BY c.cost_usd, c.seq LIMIT 1) "
          "ORDER BY r.id DESC LIMIT ?1");
  st.bind(1, static_cast<std::int64_t>(limit > 0 ? limit : -1));  // a negative LIMIT means no limit
  std::vector<RunSummary> out;
  int rc = st.prepared() ? SQLITE_ROW : SQLITE_ERROR;
  while (st.prepared() && (rc = st.step()) == SQLITE_ROW) {
    out.push_back({st.integer(0), st.text(1), st.text(2), st.text(3), st.text(4),
                   static_cast<int>(st.integer(5)), st.real(6), st.text(7)});
  }
  if (rc != SQLITE_DONE) {
    set(error, failure("cannot list runs"));
    return {};
  }
  set(error, "");
  return out;
}

std::optional<StoredRun> Store::get_run(std::int64_t id, std::string* error) const {
  Stmt st(db_.get(),
          version_ >= 2 ? "SELECT id, created_at, scenario_path, scenario_text, scenario_sha256, gpuplan_version, "
                          "command, inputs_sha256 FROM runs WHERE id = ?1"
                        : "SELECT id, created_at, scenario_path, scenario_text, scenario_sha256, gpuplan_version, "
                          "command, '' FROM runs WHERE id = ?1");  // version 1: no inputs digest yet
  st.bind(1, id);
  const int rc = st.prepared() ? st.step() : SQLITE_ERROR;
  if (rc == SQLITE_DONE) {
    set(error, path_ + ": no run with id " + std::to_string(id));
    return std::nullopt;
  }
  if (rc != SQLITE_ROW) {
    set(error, failure("cannot read run " + std::to_string(id)));
    return std::nullopt;
  }
  StoredRun run{st.integer(0), st.text(1), st.text(2), st.text(3), st.text(4), st.text(5), st.text(6), st.text(7), {}};

  Stmt cs(db_.get(),
          "SELECT config_id, inputs_json, results_json, gpus, instance, step_time_s, time_to_train_h, cost_usd, "
          "fits, bottleneck FROM configs WHERE run_id = ?1 ORDER BY seq");
  cs.bind(1, id);
  int crc = cs.prepared() ? SQLITE_ROW : SQLITE_ERROR;
  while (cs.prepared() && (crc = cs.step()) == SQLITE_ROW) {
    run.configs.push_back({cs.text(0), cs.text(1), cs.text(2), static_cast<int>(cs.integer(3)), cs.text(4),
                           cs.real(5), cs.real(6), cs.real(7), cs.integer(8) != 0, cs.text(9)});
  }
  if (crc != SQLITE_DONE) {
    set(error, failure("cannot read configurations of run " + std::to_string(id)));
    return std::nullopt;
  }
  set(error, "");
  return run;
}

// ---- SHA-256 (FIPS 180-4, section 6.2) ----
namespace {

constexpr std::array<std::uint32_t, 64> kK = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void compress(std::array<std::uint32_t, 8>& h, const unsigned char* block) {
  std::array<std::uint32_t, 64> w{};
  for (int t = 0; t < 16; ++t) {
    w[t] = (std::uint32_t{block[4 * t]} << 24) | (std::uint32_t{block[4 * t + 1]} << 16) |
           (std::uint32_t{block[4 * t + 2]} << 8) | std::uint32_t{block[4 * t + 3]};
  }
  for (int t = 16; t < 64; ++t) {
    const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  auto [a, b, c, d, e, f, g, hh] = h;
  for (int t = 0; t < 64; ++t) {
    const std::uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[t] + w[t];
    const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  const std::array<std::uint32_t, 8> add = {a, b, c, d, e, f, g, hh};
  for (int i = 0; i < 8; ++i) h[i] += add[i];
}

}  // namespace

std::string sha256_hex(const std::string& data) {
  std::array<std::uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const std::size_t full = data.size() / 64 * 64;
  for (std::size_t off = 0; off < full; off += 64) compress(h, bytes + off);

  // Padding: 0x80, zeros, then the message length in bits as a big-endian 64-bit integer.
  std::array<unsigned char, 128> tail{};
  const std::size_t rest = data.size() - full;
  for (std::size_t i = 0; i < rest; ++i) tail[i] = bytes[full + i];
  tail[rest] = 0x80;
  const std::size_t tail_len = rest < 56 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[tail_len - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  for (std::size_t off = 0; off < tail_len; off += 64) compress(h, tail.data() + off);

  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (std::uint32_t word : h) {
    for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(word >> shift) & 0xf];
  }
  return out;
}

}  // namespace gp::app
