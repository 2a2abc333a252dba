// Every option of every feature comes from one loader: a JSON file, the
// environment (WEAVE_<FEATURE>_<FIELD>), code, with one precedence (code >
// environment > file > defaults), and weave::configure() hands each
// feature its options.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/cache_runtime.h"
#include "dedupe/dedupe_runtime.h"
#include "queue/queue_runtime.h"
#include "scoped_config.h"
#include "weave/cache.h"
#include "weave/config.h"
#include "weave/dedupe.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/queue.h"
#include "weave/quota.h"
#include "weave/resilience.h"

extern char** environ;

using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

// Every option of every feature, none at its default.
const std::string kEveryOption = R"({
  "url": "mem://every-shared",
  "lock": {"url": "mem://every-lock", "watchdog_lease": "45s", "renew_interval": "5s", "lost_policy": "callback",
           "release_failure_policy": "throw_error", "key_grace": "20s", "queue_entry": "6s",
           "starvation_after": "forever", "handoff_turn": "70ms", "connect_timeout": "3s",
           "command_timeout": "1500ms", "pool_size": 5, "key_prefix": "t:lock:"},
  "cache": {"url": "mem://every-cache", "local_max_entries": 5000, "local_max_bytes": 65536, "feed_lag": "20ms",
            "fill_guard": "2min", "fill_lease": "6s", "connect_timeout": "3s", "command_timeout": "1500ms",
            "pool_size": 6, "key_prefix": "t:cache:"},
  "dedupe": {"url": "mem://every-dedupe", "claim_lease": "15s", "max_window": "48h", "max_key_bytes": 1024,
             "connect_timeout": "3s", "command_timeout": "1500ms", "pool_size": 7, "key_prefix": "t:dedupe:"},
  "queue": {"url": "mem://every-queue", "lease": "40s", "retries": 5, "backoff": "2s", "backoff_cap": "20min",
            "max_payload_bytes": 4096, "max_delay": "30h", "connect_timeout": "3s", "command_timeout": "1500ms",
            "pool_size": 8, "key_prefix": "t:queue:"},
  "quota": {"url": "mem://every-quota", "max_key_bytes": 512, "connect_timeout": "3s", "command_timeout": "1500ms",
            "pool_size": 9, "key_prefix": "t:quota:", "permit_lease": "12s", "line_place": "900ms"},
  "resilience": {"url": "mem://every-resilience", "flush_interval": "20ms", "feed_lag": "200ms",
                 "connect_timeout": "3s", "command_timeout": "1500ms", "pool_size": 3, "key_prefix": "t:resilience:"}
})";

// No WEAVE_* variable of the test run's environment, for one scope.
class NoWeaveEnvironment {
 public:
  NoWeaveEnvironment() {
    std::vector<std::string> names;
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "WEAVE_", 6) == 0) names.emplace_back(*e, std::strchr(*e, '=') - *e);
    for (const std::string& name : names) unset_.push_back(std::make_unique<ScopedEnv>(name, std::nullopt));
  }

 private:
  std::vector<std::unique_ptr<ScopedEnv>> unset_;
};

weave::ConfigSources file_only(const TempFile& f) { return {.file = f.path(), .environment = false}; }

}  // namespace

TEST_CASE("config: one file sets every option of every feature", "[config]") {
  NoWeaveEnvironment env;
  TempFile f(kEveryOption);
  const auto lock = weave::load_options<weave::LockOptions>(file_only(f));
  CHECK(lock.url == "mem://every-lock");
  CHECK(lock.watchdog_lease == 45s);
  CHECK(lock.renew_interval == 5s);
  CHECK(lock.lost_policy == weave::LeaseLostPolicy::callback);
  CHECK(lock.release_failure_policy == weave::ReleaseFailurePolicy::throw_error);
  CHECK(lock.key_grace == 20s);
  CHECK(lock.queue_entry == 6s);
  CHECK(lock.starvation_after == weave::forever);
  CHECK(lock.handoff_turn == 70ms);
  CHECK(lock.connect_timeout == 3s);
  CHECK(lock.command_timeout == 1500ms);
  CHECK(lock.pool_size == 5);
  CHECK(lock.key_prefix == "t:lock:");

  const auto cache = weave::load_options<weave::CacheOptions>(file_only(f));
  CHECK(cache.url == "mem://every-cache");
  CHECK(cache.local_max_entries == 5000);
  CHECK(cache.local_max_bytes == 65536);
  CHECK(cache.feed_lag == 20ms);
  CHECK(cache.fill_guard == 2min);
  CHECK(cache.fill_lease == 6s);
  CHECK(cache.connect_timeout == 3s);
  CHECK(cache.command_timeout == 1500ms);
  CHECK(cache.pool_size == 6);
  CHECK(cache.key_prefix == "t:cache:");

  const auto dedupe = weave::load_options<weave::DedupeOptions>(file_only(f));
  CHECK(dedupe.url == "mem://every-dedupe");
  CHECK(dedupe.claim_lease == 15s);
  CHECK(dedupe.max_window == 48h);
  CHECK(dedupe.max_key_bytes == 1024);
  CHECK(dedupe.connect_timeout == 3s);
  CHECK(dedupe.command_timeout == 1500ms);
  CHECK(dedupe.pool_size == 7);
  CHECK(dedupe.key_prefix == "t:dedupe:");

  const auto queue = weave::load_options<weave::QueueOptions>(file_only(f));
  CHECK(queue.url == "mem://every-queue");
  CHECK(queue.lease == 40s);
  CHECK(queue.retries == 5);
  CHECK(queue.backoff == 2s);
  CHECK(queue.backoff_cap == 20min);
  CHECK(queue.max_payload_bytes == 4096);
  CHECK(queue.max_delay == 30h);
  CHECK(queue.connect_timeout == 3s);
  CHECK(queue.command_timeout == 1500ms);
  CHECK(queue.pool_size == 8);
  CHECK(queue.key_prefix == "t:queue:");

  const auto quota = weave::load_options<weave::QuotaOptions>(file_only(f));
  CHECK(quota.url == "mem://every-quota");
  CHECK(quota.max_key_bytes == 512);
  CHECK(quota.connect_timeout == 3s);
  CHECK(quota.command_timeout == 1500ms);
  CHECK(quota.pool_size == 9);
  CHECK(quota.key_prefix == "t:quota:");
  CHECK(quota.permit_lease == 12s);
  CHECK(quota.line_place == 900ms);
  const auto resilience = weave::load_options<weave::ResilienceOptions>(file_only(f));
  CHECK(resilience.url == "mem://every-resilience");
  CHECK(resilience.flush_interval == 20ms);
  CHECK(resilience.feed_lag == 200ms);
  CHECK(resilience.connect_timeout == 3s);
  CHECK(resilience.command_timeout == 1500ms);
  CHECK(resilience.pool_size == 3);
  CHECK(resilience.key_prefix == "t:resilience:");

  // Every option the loader knows came from the file, as the file says it:
  // an option added to a feature and missing from the file above fails here.
  const nlohmann::json file = nlohmann::json::parse(kEveryOption);
  const std::vector<weave::ConfigSetting> settings = weave::effective_config(file_only(f));
  CHECK(settings.size() == 13 + 10 + 8 + 11 + 8 + 7);
  for (const weave::ConfigSetting& s : settings) {
    INFO(s.key);
    const std::size_t dot = s.key.find('.');
    REQUIRE(dot != std::string::npos);
    const nlohmann::json& section = file[s.key.substr(0, dot)];
    CHECK(section.contains(s.key.substr(dot + 1)));
    if (!section.contains(s.key.substr(dot + 1))) continue;
    CHECK(nlohmann::json::parse(s.value) == section[s.key.substr(dot + 1)]);
    CHECK(s.origin == "config file '" + f.path() + "'");
  }
}

TEST_CASE("config: every option of every feature can be set from the environment, over the file", "[config]") {
  NoWeaveEnvironment clean;
  TempFile f(kEveryOption);
  // One value per option, each unlike the file's.
  const std::map<std::string, std::string> values = {
      {"lock.url", "mem://env-lock"}, {"lock.watchdog_lease", "50s"}, {"lock.renew_interval", "7s"},
      {"lock.lost_policy", "throw_at_release"}, {"lock.release_failure_policy", "report"},
      {"lock.key_grace", "21s"}, {"lock.queue_entry", "8s"}, {"lock.starvation_after", "15ms"},
      {"lock.handoff_turn", "80ms"}, {"lock.connect_timeout", "4s"}, {"lock.command_timeout", "2s"},
      {"lock.pool_size", "9"}, {"lock.key_prefix", "e:lock:"},
      {"cache.url", "mem://env-cache"}, {"cache.local_max_entries", "6000"}, {"cache.local_max_bytes", "131072"},
      {"cache.feed_lag", "30ms"}, {"cache.fill_guard", "3min"}, {"cache.fill_lease", "7s"},
      {"cache.connect_timeout", "4s"}, {"cache.command_timeout", "2s"}, {"cache.pool_size", "10"},
      {"cache.key_prefix", "e:cache:"},
      {"dedupe.url", "mem://env-dedupe"}, {"dedupe.claim_lease", "16s"}, {"dedupe.max_window", "49h"},
      {"dedupe.max_key_bytes", "2048"}, {"dedupe.connect_timeout", "4s"}, {"dedupe.command_timeout", "2s"},
      {"dedupe.pool_size", "11"}, {"dedupe.key_prefix", "e:dedupe:"},
      {"queue.url", "mem://env-queue"}, {"queue.lease", "41s"}, {"queue.retries", "6"}, {"queue.backoff", "3s"},
      {"queue.backoff_cap", "21min"}, {"queue.max_payload_bytes", "8192"}, {"queue.max_delay", "31h"},
      {"queue.connect_timeout", "4s"}, {"queue.command_timeout", "2s"}, {"queue.pool_size", "12"},
      {"queue.key_prefix", "e:queue:"},
      {"quota.url", "mem://env-quota"}, {"quota.max_key_bytes", "1024"}, {"quota.connect_timeout", "4s"},
      {"quota.command_timeout", "2s"}, {"quota.pool_size", "13"}, {"quota.key_prefix", "e:quota:"},
      {"quota.permit_lease", "14s"}, {"quota.line_place", "2s"},
      {"resilience.url", "mem://env-resilience"}, {"resilience.flush_interval", "30ms"},
      {"resilience.feed_lag", "300ms"}, {"resilience.connect_timeout", "4s"}, {"resilience.command_timeout", "2s"},
      {"resilience.pool_size", "14"}, {"resilience.key_prefix", "e:resilience:"},
  };
  std::vector<std::unique_ptr<ScopedEnv>> env;
  for (const auto& [key, value] : values) {
    std::string name = "WEAVE_" + key;
    for (char& c : name) c = c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    env.push_back(std::make_unique<ScopedEnv>(name, value));
  }
  const std::vector<weave::ConfigSetting> settings = weave::effective_config({.file = f.path()});
  CHECK(settings.size() == values.size());
  for (const weave::ConfigSetting& s : settings) {
    INFO(s.key);
    const auto it = values.find(s.key);
    REQUIRE(it != values.end());  // an option without a value above
    const nlohmann::json shown = nlohmann::json::parse(s.value);
    CHECK((shown.is_string() ? shown.get<std::string>() : shown.dump()) == it->second);
    std::string name = "WEAVE_" + s.key;
    for (char& c : name) c = c == '.' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK(s.origin == "environment " + name);
  }
  // The typed options say the same.
  CHECK(weave::load_options<weave::CacheOptions>({.file = f.path()}).local_max_entries == 6000);
  CHECK(weave::load_options<weave::LockOptions>({.file = f.path()}).lost_policy ==
        weave::LeaseLostPolicy::throw_at_release);
}

TEST_CASE("config: code over the environment over the file over the defaults, for every feature alike", "[config]") {
  NoWeaveEnvironment clean;
  TempFile f(R"({"cache": {"pool_size": 6}, "dedupe": {"claim_lease": "15s"}})");
  weave::ConfigSources sources{.file = f.path()};
  CHECK(weave::load_options<weave::CacheOptions>().pool_size == 4);  // the default
  CHECK(weave::load_options<weave::CacheOptions>(sources).pool_size == 6);
  ScopedEnv pool("WEAVE_CACHE_POOL_SIZE", "9");
  ScopedEnv lease("WEAVE_DEDUPE_CLAIM_LEASE", "20s");
  weave::CacheOptions cache = weave::load_options<weave::CacheOptions>(sources);
  CHECK(cache.pool_size == 9);
  CHECK(weave::load_options<weave::DedupeOptions>(sources).claim_lease == 20s);
  cache.pool_size = 11;  // code: set on what the sources gave
  weave::configure_cache(cache);
  CHECK(weave::detail::cache_runtime()->options().pool_size == 11);

  // The shared url: the file's "url" < WEAVE_URL < ConfigSources::url; a
  // feature's own url over the shared one within each source.
  TempFile urls(R"({"url": "mem://file-all", "queue": {"url": "mem://file-queue"}})");
  weave::ConfigSources s{.file = urls.path()};
  CHECK(weave::load_options<weave::DedupeOptions>(s).url == "mem://file-all");
  CHECK(weave::load_options<weave::QueueOptions>(s).url == "mem://file-queue");
  ScopedEnv all("WEAVE_URL", "mem://env-all");
  CHECK(weave::load_options<weave::QueueOptions>(s).url == "mem://env-all");
  ScopedEnv own("WEAVE_QUEUE_URL", "mem://env-queue");
  CHECK(weave::load_options<weave::QueueOptions>(s).url == "mem://env-queue");
  CHECK(weave::load_options<weave::DedupeOptions>(s).url == "mem://env-all");
  s.url = "mem://code-all";
  CHECK(weave::load_options<weave::QueueOptions>(s).url == "mem://code-all");
  s.environment = false;
  s.url.reset();
  CHECK(weave::load_options<weave::QueueOptions>(s).url == "mem://file-queue");
}

TEST_CASE("config: configure() hands every feature its options, or changes none when one is wrong", "[config]") {
  NoWeaveEnvironment clean;
  TempFile f(kEveryOption);
  weave::configure(file_only(f));
  CHECK(weave::default_lock_client().options().watchdog_lease == 45s);
  CHECK(weave::detail::cache_runtime()->options().local_max_entries == 5000);
  CHECK(weave::detail::dedupe_runtime()->options().claim_lease == 15s);
  CHECK(weave::detail::queue_runtime_slot().get()->options().retries == 5);

  // The queue's retries out of range: the lock and the cache keep theirs too.
  TempFile bad(R"({"lock": {"watchdog_lease": "50s"}, "cache": {"local_max_entries": 7000},
                   "queue": {"retries": 5000}})");
  CHECK_THAT(error_of([&] { weave::configure(file_only(bad)); }),
             Contains("config file '" + bad.path() + "': queue.retries: must be 0..1000, got 5000"));
  CHECK(weave::default_lock_client().options().watchdog_lease == 45s);
  CHECK(weave::detail::cache_runtime()->options().local_max_entries == 5000);

  weave::configure({.url = "mem://", .environment = false});  // as the other tests expect
}

TEST_CASE("config: a mistake in any feature's options names the source, the key and the problem", "[config]") {
  NoWeaveEnvironment clean;
  SECTION("an unknown key, with the keys known") {
    TempFile f(R"({"cache": {"local_max_entry": 10}})");
    const std::string what = error_of([&] { weave::load_options<weave::CacheOptions>(file_only(f)); });
    CHECK_THAT(what, Contains("config file '" + f.path() + "': unknown key 'cache.local_max_entry'"));
    CHECK_THAT(what, Contains("local_max_entries"));
  }
  SECTION("an unknown section") {
    TempFile f(R"({"caches": {}})");
    CHECK_THAT(error_of([&] { weave::configure(file_only(f)); }),
               Contains("unknown key 'caches' (known: url, lock, cache, dedupe, queue, quota, resilience)"));
  }
  SECTION("a value of the wrong form in the file") {
    TempFile f(R"({"dedupe": {"max_key_bytes": "big"}})");
    CHECK_THAT(error_of([&] { weave::load_options<weave::DedupeOptions>(file_only(f)); }),
               Contains("config file '" + f.path() + "': dedupe.max_key_bytes: expected an integer"));
    TempFile g(R"({"queue": {"backoff": "2 s"}})");
    CHECK_THAT(error_of([&] { weave::load_options<weave::QueueOptions>(file_only(g)); }),
               Contains("queue.backoff: '2 s'"));
  }
  SECTION("a value of the wrong form in the environment") {
    ScopedEnv pool("WEAVE_CACHE_POOL_SIZE", "lots");
    CHECK_THAT(error_of([] { weave::load_options<weave::CacheOptions>(); }),
               Contains("environment WEAVE_CACHE_POOL_SIZE: cache.pool_size: expected an integer"));
  }
  SECTION("a value out of range, from the environment") {
    ScopedEnv lease("WEAVE_QUEUE_LEASE", "10ms");
    CHECK_THAT(error_of([] { weave::load_options<weave::QueueOptions>(); }),
               Contains("environment WEAVE_QUEUE_LEASE: queue.lease: must be at least 30 ms, got 10 ms"));
  }
  SECTION("a URL's password shows in no error and in no effective value") {
    TempFile f(R"({"cache": {"url": "redis://u:s3cr3t@127.0.0.1:99999"},
                   "dedupe": {"url": "nosuch://u:s3cr3t@127.0.0.1:1"}})");
    const std::string cache = error_of([&] { weave::load_options<weave::CacheOptions>(file_only(f)); });
    CHECK_THAT(cache, Contains("cache.url") && Contains("u:***@"));
    CHECK_THAT(cache, !Contains("s3cr3t"));
    const std::string dedupe = error_of([&] { weave::load_options<weave::DedupeOptions>(file_only(f)); });
    CHECK_THAT(dedupe, Contains("dedupe.url") && Contains("nosuch"));
    CHECK_THAT(dedupe, !Contains("s3cr3t"));
    TempFile good(R"({"url": "redis://u:s3cr3t@127.0.0.1:6379"})");
    for (const weave::ConfigSetting& s : weave::effective_config(file_only(good))) {
      INFO(s.key);
      CHECK_THAT(s.value, !Contains("s3cr3t"));
    }
  }
}
