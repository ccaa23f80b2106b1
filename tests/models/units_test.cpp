#include <catch2/catch.hpp>
#include <type_traits>

#include "models/units.hpp"

using namespace gp;

namespace {
template <class A, class B>
concept Addable = requires(A a, B b) { a + b; };
}  // namespace

TEST_CASE("models::units: GB and GiB are distinct", "[units]") {
  CHECK(Bytes::gb(1).value() == 1e9);
  CHECK(Bytes::gib(1).value() == 1073741824.0);
  CHECK(Bytes::gib(1).gb() == Approx(1.073741824));
  // 141 decimal GB would be 131.3 GiB; the H200's datasheet "141 GB" is binary (nvidia-smi reports 143,771 MiB,
  // 140.4 GiB), which is why catalogs/gpus.json gives hbm_GiB.
  CHECK(Bytes::gb(141).gib() == Approx(131.3165).epsilon(1e-5));
}

TEST_CASE("models::units: cross-unit arithmetic gives the right type and value", "[units]") {
  Seconds t = Bytes::gb(10) / ByteRate::gbps(5);
  CHECK(t.value() == Approx(2.0));
  Seconds g = Flops::tera(989) / FlopRate::tflops(989);
  CHECK(g.value() == Approx(1.0));
  // 100 Gb/s moves 12.5 GB in a second.
  CHECK((ByteRate::gbit(100) * Seconds(1)).gb() == Approx(12.5));
  CHECK((Watts(700) * Seconds::hours(1)).kwh() == Approx(0.7));
  HourlyPrice p{Dollars(63.296)};
  CHECK(p.for_duration(Seconds::hours(2)).value() == Approx(126.592));
  STATIC_REQUIRE(std::is_same_v<decltype(Bytes::gb(1) / ByteRate::gbps(1)), Seconds>);
}

TEST_CASE("models::units: unrelated units do not add", "[units]") {
  STATIC_REQUIRE(Addable<Seconds, Seconds>);
  STATIC_REQUIRE_FALSE(Addable<Seconds, Bytes>);
  STATIC_REQUIRE_FALSE(Addable<Flops, FlopRate>);
  STATIC_REQUIRE_FALSE(Addable<Dollars, Watts>);
}

TEST_CASE("models::units: time helpers round-trip", "[units]") {
  CHECK(Seconds::ms(1500).value() == Approx(1.5));
  CHECK(Seconds::us(9).us() == Approx(9.0));
  CHECK(Seconds::hours(2).hours() == Approx(2.0));
  CHECK((Seconds(3) / Seconds(1.5)) == Approx(2.0));
}
