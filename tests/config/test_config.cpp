// Lock configuration: precedence (code > WEAVE_LOCK_URL > JSON file >
// defaults), value formats, and one ConfigError per kind of mistake.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>

#include "scoped_config.h"
#include "weave/config.h"
#include "weave/duration.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/lock_backend.h"

using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

// No stray settings from the environment of the test run.
struct CleanEnv {
  ScopedEnv url{"WEAVE_LOCK_URL", std::nullopt};
  ScopedEnv all_url{"WEAVE_URL", std::nullopt};
  ScopedEnv cfg{"WEAVE_CONFIG", std::nullopt};
};

weave::ConfigSources from_file(const std::string& path) {
  weave::ConfigSources s;
  s.file = path;
  return s;
}

}  // namespace

TEST_CASE("config: defaults when no source says anything", "[config]") {
  CleanEnv env;
  weave::LockOptions o = weave::load_lock_options();
  CHECK(o.url == "mem://");
  CHECK(o.watchdog_lease == 30s);
  CHECK(o.renew_interval == 0ms);
  CHECK(o.lost_policy == weave::LeaseLostPolicy::throw_at_release);
}

TEST_CASE("config: a JSON file fills every option", "[config]") {
  CleanEnv env;
  TempFile f(R"({"lock": {"url": "mem://cfg", "lease": "2min", "renew_interval": 20000,
                 "on_lost": "callback", "connect_timeout": "250ms", "command_timeout": "1h",
                 "pool_size": 8, "key_prefix": "shop:locks:", "queue_entry": "2s"}})");
  weave::LockOptions o = weave::load_lock_options(from_file(f.path()));
  CHECK(o.url == "mem://cfg");
  CHECK(o.watchdog_lease == 120s);
  CHECK(o.renew_interval == 20s);
  CHECK(o.lost_policy == weave::LeaseLostPolicy::callback);
  CHECK(o.connect_timeout == 250ms);
  CHECK(o.command_timeout == 1h);
  CHECK(o.pool_size == 8);
  CHECK(o.key_prefix == "shop:locks:");
  CHECK(o.queue_entry == 2s);
}

TEST_CASE("config: queue_entry defaults, comes from the file or code, must be > 0", "[config]") {
  CleanEnv env;
  CHECK(weave::load_lock_options().queue_entry == weave::LockOptions{}.queue_entry);
  TempFile f(R"({"lock": {"queue_entry": 750}})");
  CHECK(weave::load_lock_options(from_file(f.path())).queue_entry == 750ms);
  weave::ConfigSources s = from_file(f.path());
  s.code.queue_entry = 0ms;
  CHECK_THROWS_MATCHES(weave::load_lock_options(s), weave::ConfigError,
                       Catch::Matchers::Message("weave config: code: lock.queue_entry: must be > 0, got 0 ms"));
  TempFile bad(R"({"lock": {"queue_entry": "soon"}})");
  CHECK_THROWS_AS(weave::load_lock_options(from_file(bad.path())), weave::ConfigError);
}

TEST_CASE("config: starvation_after (10 ms, or forever) and handoff_turn (50 ms) come from the file or code",
          "[config]") {
  CleanEnv env;
  const weave::LockOptions defaults = weave::load_lock_options();
  CHECK(defaults.starvation_after == 10ms);
  CHECK(defaults.handoff_turn == 50ms);
  TempFile f(R"({"lock": {"starvation_after": "25ms", "handoff_turn": "1s"}})");
  weave::LockOptions o = weave::load_lock_options(from_file(f.path()));
  CHECK(o.starvation_after == 25ms);
  CHECK(o.handoff_turn == 1s);
  TempFile off(R"({"lock": {"starvation_after": "forever"}})");
  CHECK(weave::load_lock_options(from_file(off.path())).starvation_after == weave::forever);
  weave::ConfigSources s = from_file(f.path());
  s.code.handoff_turn = 0ms;
  CHECK_THROWS_MATCHES(weave::load_lock_options(s), weave::ConfigError,
                       Catch::Matchers::Message("weave config: code: lock.handoff_turn: must be > 0, got 0 ms"));
}

TEST_CASE("config: key_grace defaults to 10 s, comes from the file or code", "[config]") {
  CleanEnv env;
  CHECK(weave::load_lock_options().key_grace == 10s);
  TempFile f(R"({"lock": {"key_grace": "2min"}})");
  CHECK(weave::load_lock_options(from_file(f.path())).key_grace == 120s);
  weave::ConfigSources s = from_file(f.path());
  s.code.key_grace = 500ms;
  CHECK(weave::load_lock_options(s).key_grace == 500ms);
  TempFile bad(R"({"lock": {"key_grace": "later"}})");
  CHECK_THROWS_AS(weave::load_lock_options(from_file(bad.path())), weave::ConfigError);
}

TEST_CASE("config: key_prefix from the file, overridden by code, validated", "[config]") {
  CleanEnv env;
  SECTION("default") { CHECK(weave::load_lock_options().key_prefix == "weave:lock:"); }
  SECTION("file, then code over file") {
    TempFile f(R"({"lock": {"key_prefix": "app1:"}})");
    CHECK(weave::load_lock_options(from_file(f.path())).key_prefix == "app1:");
    auto s = from_file(f.path());
    s.code.key_prefix = "app2:";
    CHECK(weave::load_lock_options(s).key_prefix == "app2:");
  }
  SECTION("not a string, or empty") {
    TempFile num(R"({"lock": {"key_prefix": 3}})");
    CHECK_THROWS_MATCHES(weave::load_lock_options(from_file(num.path())), weave::ConfigError,
                         Catch::Matchers::Message(
                             "weave config: config file '" + num.path() +
                             "': lock.key_prefix: expected a string, got 3"));
    TempFile empty(R"({"lock": {"key_prefix": ""}})");
    CHECK_THROWS_AS(weave::load_lock_options(from_file(empty.path())), weave::ConfigError);
    weave::ConfigSources s;
    s.code.key_prefix = "";
    CHECK_THROWS_AS(weave::load_lock_options(s), weave::ConfigError);
  }
}

TEST_CASE("config: precedence is code > WEAVE_LOCK_URL > file > defaults", "[config]") {
  CleanEnv env;
  TempFile f(R"({"lock": {"url": "mem://from-file", "lease": "45s"}})");

  SECTION("file over defaults") {
    auto o = weave::load_lock_options(from_file(f.path()));
    CHECK(o.url == "mem://from-file");
    CHECK(o.watchdog_lease == 45s);
  }
  SECTION("WEAVE_CONFIG names the file when code does not") {
    ScopedEnv cfg("WEAVE_CONFIG", f.path());
    auto o = weave::load_lock_options();
    CHECK(o.url == "mem://from-file");
  }
  SECTION("environment over file") {
    ScopedEnv url("WEAVE_LOCK_URL", "mem://from-env");
    auto o = weave::load_lock_options(from_file(f.path()));
    CHECK(o.url == "mem://from-env");
    CHECK(o.watchdog_lease == 45s);  // fields the environment does not say come from the file
  }
  SECTION("code over environment and file") {
    ScopedEnv url("WEAVE_LOCK_URL", "mem://from-env");
    auto s = from_file(f.path());
    s.code.url = "mem://from-code";
    s.code.lease = 5s;
    auto o = weave::load_lock_options(s);
    CHECK(o.url == "mem://from-code");
    CHECK(o.watchdog_lease == 5s);
  }
  SECTION("environment can be ignored") {
    ScopedEnv url("WEAVE_LOCK_URL", "mem://from-env");
    auto s = from_file(f.path());
    s.environment = false;
    CHECK(weave::load_lock_options(s).url == "mem://from-file");
  }
}

TEST_CASE("config: durations", "[config]") {
  CHECK(weave::parse_duration("250ms") == 250ms);
  CHECK(weave::parse_duration("30s") == 30s);
  CHECK(weave::parse_duration("2min") == 2min);
  CHECK(weave::parse_duration("1h") == 1h);
  CHECK(weave::parse_duration("0ms") == 0ms);
  for (const char* bad : {"", "30", "s", "-1s", "1.5s", "10 s", "3days", "1e3ms", "5m", "87601h",
                          "99999999999999999999999h"}) {
    INFO(bad);
    CHECK_THROWS_AS(weave::parse_duration(bad), weave::ConfigError);
  }
  // One grammar for weavegen and the config: "5m" is no duration in either.
  CHECK_THAT(error_of([] { weave::parse_duration("5m", "lock.lease"); }),
             Contains("lock.lease: '5m': unknown duration unit 'm' (use ms, s, min or h)"));
  CHECK_THAT(error_of([] { weave::parse_duration("87601h"); }), Contains("is too long (at most 10 years)"));
  CHECK(weave::parse_duration("87600h") == weave::max_duration);
}

TEST_CASE("config: every entry point validates the options in one place", "[config]") {
  struct Case {
    const char* field;
    void (*set)(weave::LockOptions&);
  } cases[] = {
      {"command_timeout", [](weave::LockOptions& o) { o.command_timeout = -1ms; }},
      {"command_timeout", [](weave::LockOptions& o) { o.command_timeout = 0ms; }},
      {"connect_timeout", [](weave::LockOptions& o) { o.connect_timeout = 0ms; }},
      {"pool_size", [](weave::LockOptions& o) { o.pool_size = 0; }},
      {"pool_size", [](weave::LockOptions& o) { o.pool_size = 5000; }},
      {"watchdog_lease", [](weave::LockOptions& o) { o.watchdog_lease = 0ms; }},
      {"watchdog_lease", [](weave::LockOptions& o) { o.watchdog_lease = std::chrono::hours(24 * 365 * 11); }},
      {"renew_interval", [](weave::LockOptions& o) { o.renew_interval = o.watchdog_lease; }},
      {"queue_entry", [](weave::LockOptions& o) { o.queue_entry = -5ms; }},
      {"key_grace", [](weave::LockOptions& o) { o.key_grace = 0ms; }},
      {"starvation_after", [](weave::LockOptions& o) { o.starvation_after = 0ms; }},
      {"handoff_turn", [](weave::LockOptions& o) { o.handoff_turn = -1ms; }},
      {"key_prefix", [](weave::LockOptions& o) { o.key_prefix.clear(); }},
  };
  weave::LockOptions kept;
  kept.url = "mem://validate-kept";
  weave::configure_locks(kept);
  for (const auto& c : cases) {
    INFO(c.field);
    weave::LockOptions o;
    o.url = "mem://validate";
    c.set(o);
    CHECK_THAT(error_of([&] { o.validate(); }), Contains(std::string("LockOptions::") + c.field));
    CHECK_THROWS_AS(weave::LockClient(o), weave::ConfigError);
    CHECK_THROWS_AS(weave::configure_locks(o), weave::ConfigError);
    CHECK(weave::default_lock_client().options().url == "mem://validate-kept");
  }
  // Through the loader: code, and the file.
  weave::ConfigSources s;
  s.environment = false;
  s.code.command_timeout = -1ms;
  CHECK_THAT(error_of([&] { weave::load_lock_options(s); }), Contains("code: lock.command_timeout: must be > 0"));
  TempFile f(R"({"lock": {"command_timeout": 0}})");
  CHECK_THAT(error_of([&] { weave::load_lock_options(from_file(f.path())); }),
             Contains("config file '" + f.path() + "': lock.command_timeout: must be > 0, got 0 ms"));
  weave::LockOptions fine;
  CHECK_NOTHROW(fine.validate());
  // The parts the loader builds its message from: no text is cut.
  const weave::ConfigError field("LockOptions", "pool_size", "must be 1..1024, got 0");
  CHECK(std::string(field.what()) == "weave config: LockOptions::pool_size must be 1..1024, got 0");
  CHECK(field.key() == "pool_size");
  CHECK(field.problem() == "must be 1..1024, got 0");
}

TEST_CASE("config: lock URLs", "[config]") {
  auto m = weave::parse_store_url("mem://");
  CHECK(m.scheme == "mem");
  CHECK(m.name.empty());
  CHECK(weave::parse_store_url("mem://tenant-a").name == "tenant-a");

  auto r = weave::parse_store_url("redis://app:s%40cret@cache.local:6380/3");
  CHECK(r.scheme == "redis");
  CHECK(r.user == "app");
  CHECK(r.password == "s@cret");
  CHECK(r.host == "cache.local");
  CHECK(r.port == 6380);
  CHECK(r.db == 3);

  auto d = weave::parse_store_url("redis://127.0.0.1");
  CHECK(d.port == 6379);
  CHECK(d.db == 0);
  CHECK(d.user.empty());
  auto p = weave::parse_store_url("redis://:pw@[::1]:7000");
  CHECK(p.password == "pw");
  CHECK(p.host == "::1");
  CHECK(p.port == 7000);

  for (const char* bad : {"localhost:6379", "://x", "redis://", "redis://host:0", "redis://host:99999",
                          "redis://host:port", "redis://host/db", "mem://a/b", "redis://[::1"}) {
    INFO(bad);
    CHECK_THROWS_AS(weave::parse_store_url(bad), weave::ConfigError);
  }
}

TEST_CASE("config: a redis:// URL from any source is parsed into the options", "[config]") {
  CleanEnv env;
  TempFile f(R"({"lock": {"url": "redis://user:pw@localhost:6379/1", "pool_size": 2}})");
  weave::LockOptions o = weave::load_lock_options(from_file(f.path()));
  CHECK(o.url == "redis://user:pw@localhost:6379/1");
  CHECK(o.pool_size == 2);
  ScopedEnv url("WEAVE_LOCK_URL", "redis://cache:6380");
  CHECK(weave::load_lock_options(from_file(f.path())).url == "redis://cache:6380");
}

TEST_CASE("config: each mistake is a ConfigError naming its source", "[config]") {
  CleanEnv env;
  SECTION("bad scheme in the environment") {
    ScopedEnv url("WEAVE_LOCK_URL", "zookeeper://zk:2181");
    auto what = error_of([] { weave::load_lock_options(); });
    CHECK_THAT(what, Contains("WEAVE_LOCK_URL") && Contains("zookeeper"));
  }
  SECTION("bad scheme in code") {
    weave::ConfigSources s;
    s.code.url = "etcd://x:1";
    CHECK_THAT(error_of([&] { weave::load_lock_options(s); }), Contains("code") && Contains("etcd"));
  }
  SECTION("bad URL in the file") {
    TempFile f(R"({"lock": {"url": "localhost:6379"}})");
    CHECK_THAT(error_of([&] { weave::load_lock_options(from_file(f.path())); }),
               Contains(f.path()) && Contains("lock.url"));
  }
  SECTION("bad JSON") {
    TempFile f(R"({"lock": {"url": "mem://",}})");
    CHECK_THAT(error_of([&] { weave::load_lock_options(from_file(f.path())); }),
               Contains(f.path()) && Contains("bad JSON"));
  }
  SECTION("unknown key under lock") {
    TempFile f(R"({"lock": {"urll": "mem://"}})");
    CHECK_THAT(error_of([&] { weave::load_lock_options(from_file(f.path())); }),
               Contains(f.path()) && Contains("lock.urll"));
  }
  SECTION("unknown top-level key") {
    TempFile f(R"({"locks": {}})");
    CHECK_THAT(error_of([&] { weave::load_lock_options(from_file(f.path())); }),
               Contains("unknown key 'locks'"));
  }
  SECTION("bad duration") {
    TempFile f(R"({"lock": {"lease": "30 seconds"}})");
    CHECK_THAT(error_of([&] { weave::load_lock_options(from_file(f.path())); }),
               Contains("lock.lease") && Contains("30 seconds"));
  }
  SECTION("bad on_lost") {
    TempFile f(R"({"lock": {"on_lost": "ignore"}})");
    CHECK_THAT(error_of([&] { weave::load_lock_options(from_file(f.path())); }),
               Contains("lock.on_lost") && Contains("ignore"));
  }
  SECTION("a number too large for a double") {
    // (nlohmann reads it as out_of_range, not parse_error: it escaped as that)
    TempFile f(R"({"lock": {"lease": 1E400}})");
    CHECK_THAT(error_of([&] { weave::load_lock_options(from_file(f.path())); }),
               Contains(f.path()) && Contains("bad JSON"));
  }
  SECTION("JSON nested deeper than 128 levels, as a value whose error prints it") {
    // (before it was refused, printing it in the error overflowed the stack)
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    TempFile f(R"({"lock": {"on_lost": )" + deep + "}}");
    CHECK_THAT(error_of([&] { weave::load_lock_options(from_file(f.path())); }),
               Contains(f.path()) && Contains("bad JSON") && Contains("128"));
  }
  SECTION("wrong value type") {
    TempFile f(R"({"lock": {"url": 5}})");
    CHECK_THAT(error_of([&] { weave::load_lock_options(from_file(f.path())); }), Contains("lock.url"));
  }
  SECTION("unreadable file from WEAVE_CONFIG") {
    ScopedEnv cfg("WEAVE_CONFIG", "/nonexistent/weave.json");
    CHECK_THAT(error_of([] { weave::load_lock_options(); }),
               Contains("WEAVE_CONFIG") && Contains("/nonexistent/weave.json"));
  }
  SECTION("renew interval not shorter than the lease") {
    weave::ConfigSources s;
    s.environment = false;
    s.code.lease = 1s;
    s.code.renew_interval = 1s;
    CHECK_THAT(error_of([&] { weave::load_lock_options(s); }), Contains("renew_interval"));
  }
}

TEST_CASE("config: configure_locks rejects a bad URL and keeps the client it had", "[config]") {
  weave::LockOptions good;
  good.url = "mem://configure-test";
  weave::configure_locks(good);
  weave::LockOptions bad;
  bad.url = "nope://x";
  CHECK_THROWS_AS(weave::configure_locks(bad), weave::ConfigError);
  CHECK(weave::default_lock_client().options().url == "mem://configure-test");
}

TEST_CASE("config: one URL serves every feature, a feature's own URL wins within its source", "[config]") {
  CleanEnv env;
  SECTION("the file's top-level url, and lock.url over it") {
    TempFile all(R"({"url": "mem://from-file", "lock": {"lease": "10s"}})");
    CHECK(weave::load_lock_options(from_file(all.path())).url == "mem://from-file");
    TempFile own(R"({"url": "mem://all", "lock": {"url": "mem://locks"}})");
    CHECK(weave::load_lock_options(from_file(own.path())).url == "mem://locks");
    TempFile bad(R"({"url": "zookeeper://x"})");
    CHECK_THAT(error_of([&] { weave::load_lock_options(from_file(bad.path())); }),
               Contains("url") && Contains("zookeeper"));
  }
  SECTION("WEAVE_URL, and WEAVE_LOCK_URL over it; the environment over the file") {
    TempFile f(R"({"lock": {"url": "mem://file-locks"}})");
    ScopedEnv cfg("WEAVE_CONFIG", f.path());
    ScopedEnv all("WEAVE_URL", "mem://env-all");
    CHECK(weave::load_lock_options().url == "mem://env-all");
    ScopedEnv locks("WEAVE_LOCK_URL", "mem://env-locks");
    CHECK(weave::load_lock_options().url == "mem://env-locks");
  }
  SECTION("code: url for every feature, code.url for locks, over the environment") {
    ScopedEnv locks("WEAVE_LOCK_URL", "mem://env-locks");
    weave::ConfigSources s;
    s.url = "mem://code-all";
    CHECK(weave::load_lock_options(s).url == "mem://code-all");
    s.code.url = "mem://code-locks";
    CHECK(weave::load_lock_options(s).url == "mem://code-locks");
  }
  SECTION("weave::configure makes them the process's defaults, or keeps the old ones") {
    weave::ConfigSources s;
    s.environment = false;
    s.url = "mem://configured-all";
    weave::configure(s);
    CHECK(weave::default_lock_client().options().url == "mem://configured-all");
    s.url = "nope://x";
    CHECK_THROWS_AS(weave::configure(s), weave::ConfigError);
    CHECK(weave::default_lock_client().options().url == "mem://configured-all");
  }
}

TEST_CASE("config: a URL's hosts are parsed once, each port defaulted by its scheme", "[config]") {
  using Host = weave::StoreUrl::Host;
  auto hosts = [](const char* url) {
    std::vector<std::pair<std::string, int>> out;
    for (const Host& h : weave::parse_store_url(url).hosts) out.emplace_back(h.host, h.port);
    return out;
  };
  using List = std::vector<std::pair<std::string, int>>;
  CHECK(hosts("redis://cache") == List{{"cache", 6379}});
  CHECK(hosts("redis://u:p@cache:7000/3") == List{{"cache", 7000}});
  CHECK(hosts("redlock://a,b:7001,[::1]") == List{{"a", 6379}, {"b", 7001}, {"::1", 6379}});
  CHECK(hosts("redis+cluster://n1:7000,n2") == List{{"n1", 7000}, {"n2", 6379}});
  CHECK(hosts("redis+sentinel://s1,s2:26380/mymaster/2") == List{{"s1", 26379}, {"s2", 26380}});
  CHECK(hosts("plain://somewhere") == List{{"somewhere", 0}});  // a scheme Weave does not know: no default
  const auto one = weave::parse_store_url("redis://cache");
  CHECK(one.host == "cache");
  CHECK(one.port == 6379);
  // Every list is checked the same way, whatever its scheme.
  for (const char* bad : {"redlock://a,a:6379", "redis+cluster://n1:7000,n1:7000", "redis+sentinel://s,s:26379/m",
                          "redlock://a,,b"}) {
    INFO(bad);
    CHECK_THROWS_AS(weave::parse_store_url(bad), weave::ConfigError);
  }
  CHECK_THAT(error_of([] { weave::parse_store_url("redlock://a,a:6379"); }), Contains("host a:6379 is listed twice"));
}
