// weave::configure() gives the cache and dedupe libraries the URL every
// feature shares: both then talk to that store (here an address where nothing
// listens, so the effect shows as their failures).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cache_methods.h"
#include "scoped_config.h"
#include "dedupe_methods.h"
#include "weave/cache.h"
#include "weave/config.h"
#include "weave/dedupe.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/queue.h"
#include "weave/url.h"

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

// No configure() call at all: each feature's first use loads its options
// from $WEAVE_CONFIG and the environment, as weave::load_options() does.
TEST_CASE("configure: a feature never configured in code takes its options from WEAVE_CONFIG and the environment at first use") {
  // Port 1 on loopback: nothing listens, connecting fails at once.
  TempFile file(R"({"lock": {"key_prefix": "from-file:"},
                    "cache": {"url": "redis://127.0.0.1:1"},
                    "dedupe": {"url": "redis://127.0.0.1:1"}})");
  ScopedEnv config("WEAVE_CONFIG", file.path());
  ScopedEnv url("WEAVE_URL", std::nullopt);
  ScopedEnv lock_watchdog("WEAVE_LOCK_WATCHDOG_LEASE", "45s");

  const weave::LockOptions lock = weave::default_lock_client().options();
  CHECK(lock.key_prefix == "from-file:");
  CHECK(lock.watchdog_lease == std::chrono::seconds(45));

  cache_test::Catalog catalog;
  REQUIRE(catalog.find("first-use", "k")->id == "k");  // the cache fails open: the method ran
  CHECK(weave::cache_stats("first-use").errors >= 1);  // against the file's store
  dedupe_test::Payments payments;
  CHECK_THROWS_AS(payments.pay("first-use-key"), weave::IoError);
  CHECK(payments.runs == 0);
}

TEST_CASE("configure_cache and configure_dedupe refuse a scheme no linked library serves") {
  REQUIRE_THROWS_WITH(weave::configure_cache({.url = "nosuch://x"}), Catch::Contains("nosuch://"));
  REQUIRE_THROWS_WITH(weave::configure_dedupe({.url = "nosuch://x"}), Catch::Contains("nosuch://"));
}

// A URL's password stays out of every error about it, whichever entry point
// reads it and whatever is wrong with it; the user and the rest show, so
// the message still says which URL.
TEST_CASE("store URLs: no error shows the password and every one shows the URL with it masked") {
  const std::string bad_urls[] = {
      "redis://u:s3cr3t@127.0.0.1:99999",      // bad port
      "redis://u:s3cr3t@127.0.0.1:6379/nine",  // bad database
      "redis://u:s3%zzcr3t@127.0.0.1:6379",    // bad %-escape in the password itself
      "nosuch://u:s3cr3t@127.0.0.1:1",         // a scheme no library serves
      "redis+sentinel://u:s3cr3t@127.0.0.1",   // no master name
  };
  for (const std::string& url : bad_urls) {
    INFO(url);
    std::vector<std::string> messages;
    auto collect = [&](auto&& f) {
      try {
        f();
        messages.push_back("(no error)");
      } catch (const weave::Error& e) {
        messages.emplace_back(e.what());
      }
    };
    collect([&] { weave::configure_locks({.url = url}); });
    collect([&] { weave::LockClient{weave::LockOptions{.url = url}}; });
    collect([&] { weave::configure_cache({.url = url}); });
    collect([&] { weave::configure_dedupe({.url = url}); });
    collect([&] { weave::configure_queues({.url = url}); });
    collect([&] { weave::configure({.url = url, .environment = false}); });
    ::setenv("WEAVE_LOCK_URL", url.c_str(), 1);
    collect([&] { weave::load_lock_options(); });
    ::unsetenv("WEAVE_LOCK_URL");
    const std::string file = "/tmp/weave-redact-test-" + std::to_string(::getpid()) + ".json";
    std::ofstream(file) << R"({"url": ")" << url << R"("})";
    collect([&] { weave::load_lock_options({.file = file, .environment = false}); });
    std::remove(file.c_str());
    for (const std::string& m : messages) {
      INFO(m);
      CHECK(m.find("s3") == std::string::npos);
      CHECK(m.find("u:***@") != std::string::npos);
    }
  }
  // A URL that parses but cannot be opened: its store says why, masked too.
  try {
    weave::LockClient{weave::LockOptions{.url = "redis://u:s3cr3t@a:1,b:2"}};
    FAIL("a redis:// URL with two hosts was opened");
  } catch (const weave::ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("redis://u:***@a:1,b:2") && Catch::Contains("one host"));
    CHECK(std::string(e.what()).find("s3") == std::string::npos);
  }
  CHECK(weave::redact_url("redis://u:s3cr3t@h:1") == "redis://u:***@h:1");
  CHECK(weave::redact_url("redis://:p@ss@h") == "redis://:***@h");  // up to the last '@', as parsed
  CHECK(weave::redact_url("redis://user@h:1") == "redis://user@h:1");  // no password
  CHECK(weave::redact_url("redis://h:1/0") == "redis://h:1/0");
  CHECK(weave::redact_url("mem://") == "mem://");
}
