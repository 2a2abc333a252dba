// weave::configure() gives the cache and dedupe libraries the URL every
// feature shares: both then talk to that store (here an address where nothing
// listens, so the effect shows as their failures).
#include <catch2/catch.hpp>

#include <string>

#include "cache_methods.h"
#include "dedupe_methods.h"
#include "weave/cache.h"
#include "weave/config.h"
#include "weave/dedupe.h"
#include "weave/error.h"

TEST_CASE("configure: the shared url reaches the cache and dedupe") {
  // Port 1 on loopback: nothing listens, connecting fails at once.
  weave::configure({.url = "redis://127.0.0.1:1", .environment = false});
  cache_test::Catalog catalog;
  REQUIRE(catalog.find("configured", "k")->id == "k");  // the cache fails open: the method ran
  REQUIRE(weave::cache_stats("configured").errors >= 1);
  dedupe_test::Payments payments;
  REQUIRE_THROWS_AS(payments.pay("configured-key"), weave::IoError);  // a claim cannot be made
  REQUIRE(payments.runs == 0);

  weave::configure({.url = "mem://", .environment = false});
  REQUIRE(catalog.find("configured-again", "k")->id == "k");
  REQUIRE(weave::cache_stats("configured-again").errors == 0);
  REQUIRE(payments.pay("configured-key").id == "r-1");
}

TEST_CASE("configure_cache and configure_dedupe refuse a scheme no linked library serves") {
  REQUIRE_THROWS_WITH(weave::configure_cache({.url = "nosuch://x"}), Catch::Contains("nosuch://"));
  REQUIRE_THROWS_WITH(weave::configure_dedupe({.url = "nosuch://x"}), Catch::Contains("nosuch://"));
}
