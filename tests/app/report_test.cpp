// The run table's number format, by hand: three significant digits after rounding.
#include <catch2/catch.hpp>

#include "app/report.hpp"

using gp::app::sig3;

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
}
