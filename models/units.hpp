// Units as types. A quantity is a double in SI base units (seconds, bytes, FLOPs, watts, US dollars)
// wrapped in a tag type, so that `bytes / bytes_per_s` yields Seconds and `seconds + bytes` does not
// compile. Decimal (GB = 1e9 bytes) and binary (GiB = 2^30 bytes) sizes have distinct constructors.
#pragma once

#include <cmath>
#include <compare>

namespace gp {

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double base_units) : v_(base_units) {}
  // Value in SI base units of this quantity.
  [[nodiscard]] constexpr double value() const { return v_; }

  constexpr Quantity& operator+=(Quantity o) { v_ += o.v_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { v_ -= o.v_; return *this; }
  constexpr Quantity& operator*=(double k) { v_ *= k; return *this; }
  constexpr Quantity& operator/=(double k) { v_ /= k; return *this; }
  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.v_ + b.v_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.v_ - b.v_); }
  friend constexpr Quantity operator-(Quantity a) { return Quantity(-a.v_); }
  friend constexpr Quantity operator*(Quantity a, double k) { return Quantity(a.v_ * k); }
  friend constexpr Quantity operator*(double k, Quantity a) { return Quantity(a.v_ * k); }
  friend constexpr Quantity operator/(Quantity a, double k) { return Quantity(a.v_ / k); }
  // Ratio of two like quantities is a plain number.
  friend constexpr double operator/(Quantity a, Quantity b) { return a.v_ / b.v_; }
  friend constexpr auto operator<=>(Quantity a, Quantity b) = default;
  friend constexpr bool operator==(Quantity a, Quantity b) = default;

 private:
  double v_ = 0.0;
};

struct SecondsTag {};
struct BytesTag {};
struct FlopsTag {};
struct FlopRateTag {};
struct ByteRateTag {};
struct WattsTag {};
struct JoulesTag {};
struct DollarsTag {};

// Time in seconds.
class Seconds : public Quantity<SecondsTag> {
 public:
  using Quantity::Quantity;
  constexpr Seconds(Quantity<SecondsTag> q) : Quantity(q) {}  // NOLINT: implicit from base
  static constexpr Seconds ms(double x) { return Seconds(x * 1e-3); }
  static constexpr Seconds us(double x) { return Seconds(x * 1e-6); }
  static constexpr Seconds ns(double x) { return Seconds(x * 1e-9); }
  static constexpr Seconds hours(double x) { return Seconds(x * 3600.0); }
  [[nodiscard]] constexpr double ms() const { return value() * 1e3; }
  [[nodiscard]] constexpr double us() const { return value() * 1e6; }
  [[nodiscard]] constexpr double hours() const { return value() / 3600.0; }
};

// Amount of data in bytes. GB/MB/KB are decimal (10^9...), GiB/MiB/KiB binary (2^30...).
class Bytes : public Quantity<BytesTag> {
 public:
  using Quantity::Quantity;
  constexpr Bytes(Quantity<BytesTag> q) : Quantity(q) {}  // NOLINT
  static constexpr Bytes kb(double x) { return Bytes(x * 1e3); }
  static constexpr Bytes mb(double x) { return Bytes(x * 1e6); }
  static constexpr Bytes gb(double x) { return Bytes(x * 1e9); }
  static constexpr Bytes tb(double x) { return Bytes(x * 1e12); }
  static constexpr Bytes kib(double x) { return Bytes(x * 1024.0); }
  static constexpr Bytes mib(double x) { return Bytes(x * 1048576.0); }
  static constexpr Bytes gib(double x) { return Bytes(x * 1073741824.0); }
  [[nodiscard]] constexpr double gb() const { return value() / 1e9; }
  [[nodiscard]] constexpr double gib() const { return value() / 1073741824.0; }
  [[nodiscard]] constexpr double mib() const { return value() / 1048576.0; }
};

// Floating-point operations (a multiply-add counts as 2).
class Flops : public Quantity<FlopsTag> {
 public:
  using Quantity::Quantity;
  constexpr Flops(Quantity<FlopsTag> q) : Quantity(q) {}  // NOLINT
  static constexpr Flops tera(double x) { return Flops(x * 1e12); }
  [[nodiscard]] constexpr double tera() const { return value() / 1e12; }
};

// Compute throughput in FLOP/s.
class FlopRate : public Quantity<FlopRateTag> {
 public:
  using Quantity::Quantity;
  constexpr FlopRate(Quantity<FlopRateTag> q) : Quantity(q) {}  // NOLINT
  static constexpr FlopRate tflops(double x) { return FlopRate(x * 1e12); }
  [[nodiscard]] constexpr double tflops() const { return value() / 1e12; }
};

// Data throughput in bytes/s. gbps = GB/s (10^9 bytes/s); gbit = Gb/s (10^9 bits/s).
class ByteRate : public Quantity<ByteRateTag> {
 public:
  using Quantity::Quantity;
  constexpr ByteRate(Quantity<ByteRateTag> q) : Quantity(q) {}  // NOLINT
  static constexpr ByteRate gbps(double x) { return ByteRate(x * 1e9); }
  static constexpr ByteRate gbit(double x) { return ByteRate(x * 1e9 / 8.0); }
  static constexpr ByteRate gibps(double x) { return ByteRate(x * 1073741824.0); }
  [[nodiscard]] constexpr double gbps() const { return value() / 1e9; }
  [[nodiscard]] constexpr double gbit() const { return value() * 8.0 / 1e9; }
};

// Electrical power in watts.
class Watts : public Quantity<WattsTag> {
 public:
  using Quantity::Quantity;
  constexpr Watts(Quantity<WattsTag> q) : Quantity(q) {}  // NOLINT
  [[nodiscard]] constexpr double kw() const { return value() / 1e3; }
};

// Energy in joules.
class Joules : public Quantity<JoulesTag> {
 public:
  using Quantity::Quantity;
  constexpr Joules(Quantity<JoulesTag> q) : Quantity(q) {}  // NOLINT
  [[nodiscard]] constexpr double kwh() const { return value() / 3.6e6; }
};

// Money in US dollars.
class Dollars : public Quantity<DollarsTag> {
 public:
  using Quantity::Quantity;
  constexpr Dollars(Quantity<DollarsTag> q) : Quantity(q) {}  // NOLINT
};

// Cross-unit arithmetic: only the physically meaningful combinations exist.
constexpr Seconds operator/(Bytes b, ByteRate r) { return Seconds(b.value() / r.value()); }
constexpr Seconds operator/(Flops f, FlopRate r) { return Seconds(f.value() / r.value()); }
constexpr ByteRate operator/(Bytes b, Seconds s) { return ByteRate(b.value() / s.value()); }
constexpr FlopRate operator/(Flops f, Seconds s) { return FlopRate(f.value() / s.value()); }
constexpr Bytes operator*(ByteRate r, Seconds s) { return Bytes(r.value() * s.value()); }
constexpr Bytes operator*(Seconds s, ByteRate r) { return r * s; }
constexpr Flops operator*(FlopRate r, Seconds s) { return Flops(r.value() * s.value()); }
constexpr Flops operator*(Seconds s, FlopRate r) { return r * s; }
constexpr Joules operator*(Watts w, Seconds s) { return Joules(w.value() * s.value()); }
constexpr Joules operator*(Seconds s, Watts w) { return w * s; }
constexpr Watts operator/(Joules j, Seconds s) { return Watts(j.value() / s.value()); }

// A price per hour, e.g. an instance's on-demand rate.
struct HourlyPrice {
  Dollars per_hour;
  [[nodiscard]] constexpr Dollars for_duration(Seconds s) const { return per_hour * s.hours(); }
};

}  // namespace gp
