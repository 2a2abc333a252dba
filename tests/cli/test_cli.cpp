// weave (cli/): each command as a process against a redis-server started
// here: what it prints, its --json, its exit code (0 done, 1 failed, 2
// usage), and a forced unlock the holder notices.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_service.h"
#include "cli_service.weave.h"
#include "cluster_fixture.h"
#include "redis_server.h"
#include "scoped_config.h"
#include "sentinel_fixture.h"
#include "weave/cache.h"
#include "weave/dedupe.h"
#include "weave/delay_worker.h"
#include "weave/error.h"
#include "weave/lock.h"
#include "weave/schedules.h"
#include "weave/queue.h"
#include "weave/rate_limit.h"
#include "weave/semaphore.h"
#include "weave/redis_acl.h"

using namespace std::chrono_literals;

namespace {

struct Ran {
  int code = -1;
  std::string out, err;
};

// Runs `weave <args>` (each argument single-quoted for the shell).
Ran weave_cli(const std::vector<std::string>& args) {
  std::string command = WEAVE_CLI;
  for (const std::string& a : args) command += " '" + a + "'";
  const std::string err_file = "/tmp/weave-cli-test-" + std::to_string(::getpid()) + ".err";
  command += " 2>" + err_file;
  Ran r;
  std::FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  std::remove(err_file.c_str());
  return r;
}

redis_test::RedisServer& server() {
  static redis_test::RedisServer s;
  return s;
}

std::string unique(const std::string& name) {
  static int n = 0;
  return "cli-test:" + std::to_string(::getpid()) + ":" + name + ":" + std::to_string(n++);
}

}  // namespace

TEST_CASE("weave check: every master with its version and round trip, the ACL fine, the rule printed") {
  const Ran r = weave_cli({"--url", server().url(), "check"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("127.0.0.1:" + std::to_string(server().port())));
  CHECK_THAT(r.out, Catch::Contains("standalone"));
  CHECK_THAT(r.out, Catch::Contains("may run every command"));
  CHECK_THAT(r.out, Catch::Contains(weave::redis_acl_rule()));
  const auto js = nlohmann::json::parse(weave_cli({"--url", server().url(), "--json", "check"}).out);
  CHECK(js["ok"] == true);
  CHECK(js["masters"].size() == 1);
  CHECK(js["masters"][0]["role"] == "master");
}

TEST_CASE("weave check: a user with the minimal rule passes, one lacking a command is told which, exit 1") {
  redis_test::Raw admin(server().port());
  std::vector<std::string> set_user = {"ACL", "SETUSER", "cli-ok", "on", ">pw", "resetkeys", "resetchannels"};
  std::istringstream rule(weave::redis_acl_rule());
  for (std::string item; rule >> item;) set_user.push_back(item);
  admin.cmd(set_user);
  set_user[2] = "cli-short";
  admin.cmd(set_user);
  admin.cmd({"ACL", "SETUSER", "cli-short", "-zscore", "-ssubscribe"});
  const std::string port = std::to_string(server().port());

  const Ran ok = weave_cli({"--url", "redis://cli-ok:pw@127.0.0.1:" + port, "check"});
  CHECK(ok.code == 0);
  CHECK_THAT(ok.out, Catch::Contains("may run every command"));

  const Ran short_of = weave_cli({"--url", "redis://cli-short:pw@127.0.0.1:" + port, "--json", "check"});
  CHECK(short_of.code == 1);
  const auto js = nlohmann::json::parse(short_of.out);
  CHECK(js["acl_refused"] == nlohmann::json::array({"+ssubscribe", "+zscore"}));
  CHECK_THAT(short_of.err, Catch::Contains("ACL refuses"));
}

TEST_CASE("weave: a bad URL or an unreachable server is one line and exit 1, a bad command line exit 2") {
  const Ran unreachable = weave_cli({"--url", "redis://127.0.0.1:1", "check"});
  CHECK(unreachable.code == 1);
  CHECK(unreachable.out.empty());
  CHECK(std::count(unreachable.err.begin(), unreachable.err.end(), '\n') == 1);
  CHECK_THAT(unreachable.err, Catch::Contains("127.0.0.1:1"));

  const Ran bad_url = weave_cli({"--url", "nope://x", "locks"});
  CHECK(bad_url.code == 1);
  CHECK(std::count(bad_url.err.begin(), bad_url.err.end(), '\n') == 1);
  CHECK_THAT(bad_url.err, Catch::Contains("unknown scheme 'nope'"));

  const Ran secret = weave_cli({"--url", "redis://u:s3cr3t@127.0.0.1:99999", "check"});
  CHECK(secret.code == 1);
  CHECK_THAT(secret.err, Catch::Contains("redis://u:***@127.0.0.1:99999") && Catch::Contains("bad port"));
  CHECK(secret.err.find("s3cr3t") == std::string::npos);

  CHECK(weave_cli({"no-such-command"}).code == 2);
  CHECK(weave_cli({"--url", server().url(), "unlock"}).code == 2);  // KEY missing
  const Ran help = weave_cli({"unlock", "--help"});
  CHECK(help.code == 0);
  CHECK_THAT(help.out, Catch::Contains("--force"));
}

TEST_CASE("weave locks lists a held lock, weave unlock --force frees it and the holder notices") {
  weave::LockOptions o{.url = server().url(), .watchdog_lease = 900ms};
  weave::LockClient locks(o);
  const std::string key = unique("force");
  weave::LeaseHandle held = locks.acquire(key);  // watchdog: renewed every 300 ms
  const std::uint64_t token = held->fencing_token();
  std::promise<void> fired;
  std::stop_callback on_lost(held->stop_token(), [&] { fired.set_value(); });

  const Ran listed = weave_cli({"--url", server().url(), "--json", "locks", "cli-test:*"});
  REQUIRE(listed.code == 0);
  const auto js = nlohmann::json::parse(listed.out);
  REQUIRE(js.size() == 1);
  CHECK(js[0]["key"] == key);
  CHECK(js[0]["holders"][0]["owner"] == held->owner_token());
  CHECK(js[0]["holders"][0]["fencing_token"] == token);
  CHECK_THAT(weave_cli({"--url", server().url(), "locks"}).out, Catch::Contains(key));

  // Without --force: says what it would free, frees nothing.
  const Ran dry = weave_cli({"--url", server().url(), "unlock", key});
  CHECK(dry.code == 0);
  CHECK_THAT(dry.out, Catch::Contains("would free") && Catch::Contains(held->owner_token()));
  CHECK_FALSE(held->lost());

  const Ran forced = weave_cli({"--url", server().url(), "--json", "unlock", key, "--force"});
  REQUIRE(forced.code == 0);
  const auto f = nlohmann::json::parse(forced.out);
  CHECK(f["freed"][0]["owner"] == held->owner_token());
  const std::uint64_t fence = f["fence"];
  CHECK(fence > token);

  // The holder's watchdog finds the lease gone at its next renewal: the stop token fires.
  REQUIRE(fired.get_future().wait_for(5s) == std::future_status::ready);
  CHECK(held->lost());
  // A fenced store (it keeps the highest token it accepted) refuses the old holder's late write.
  std::uint64_t highest = 0;
  auto fenced_write = [&](std::uint64_t t) {
    if (t < highest) return false;
    highest = t;
    return true;
  };
  weave::LeaseHandle next = locks.acquire(key, {.wait = 1s});
  CHECK(next->fencing_token() > fence);
  CHECK(fenced_write(next->fencing_token()));
  CHECK_FALSE(fenced_write(token));
  CHECK_THROWS_AS(held.release(), weave::LeaseLost);
}

TEST_CASE("weave queue: stats, peek, dead, show, requeue and purge of a dead message") {
  weave::configure_queues({.url = server().url()});
  const std::string name = unique("queue");
  weave::Queue q(name);
  q.offer_json("1", 0ms, {.id = "a"});
  q.offer_json("2", 0ms, {.id = "b"});
  q.offer_json("3", 1h, {.id = "c"});
  q.take_json(1s)->dead("bad input");
  const auto url = server().url();

  auto stats = nlohmann::json::parse(weave_cli({"--url", url, "--json", "queue", "stats", name}).out);
  CHECK(stats["dead"] == 1);
  CHECK(stats["ready"] == 1);
  CHECK(stats["delayed"] == 1);
  const auto dead = nlohmann::json::parse(weave_cli({"--url", url, "--json", "queue", "dead", name}).out);
  REQUIRE(dead.size() == 1);
  CHECK(dead[0]["id"] == "a");
  CHECK(dead[0]["last_error"] == "bad input");
  const auto peeked = nlohmann::json::parse(weave_cli({"--url", url, "--json", "queue", "peek", name}).out);
  REQUIRE(peeked.size() == 2);
  CHECK(peeked[0]["id"] == "b");
  CHECK(peeked[1]["id"] == "c");
  CHECK(peeked[1]["payload"] == "3");
  CHECK_THAT(weave_cli({"--url", url, "queue", "peek", name, "--limit", "1"}).out, !Catch::Contains(" c "));
  const Ran show = weave_cli({"--url", url, "queue", "show", name, "a"});
  CHECK(show.code == 0);
  CHECK_THAT(show.out, Catch::Contains("dead") && Catch::Contains("bad input"));
  CHECK(weave_cli({"--url", url, "queue", "show", name, "nope"}).code == 1);

  CHECK(weave_cli({"--url", url, "queue", "requeue", name, "a"}).code == 0);
  CHECK(q.stats().dead == 0);
  CHECK(weave_cli({"--url", url, "queue", "requeue", name, "a"}).code == 1);  // not dead any more

  q.take_json(1s)->dead("again");
  q.take_json(1s)->dead("and again");
  const auto purged = nlohmann::json::parse(weave_cli({"--url", url, "--json", "queue", "purge", name}).out);
  CHECK(purged["deleted"] == 2);
  CHECK(q.stats().dead == 0);
}

TEST_CASE("weave schedules: the next tick, misses and last run of each schedule, pause and resume") {
  weave::configure_queues({.url = server().url()});
  const auto url = server().url();
  weave::Woven<clitest::Reports> reports;
  {
    weave::DelayWorker worker;
    worker.serve(reports);
    std::jthread t([&](std::stop_token stop) { worker.run(stop); });
    std::this_thread::sleep_for(600ms);
  }
  REQUIRE(reports.runs.load() >= 2);
  auto find = [](const nlohmann::json& all) {
    for (const auto& s : all)
      if (s["name"] == "cli-report") return s;
    return nlohmann::json();
  };
  const nlohmann::json listed = find(nlohmann::json::parse(weave_cli({"--url", url, "--json", "schedules"}).out));
  REQUIRE(listed.is_object());
  CHECK(listed["paused"] == false);
  CHECK(listed["missed"].is_number());
  CHECK(listed["last_run"]["outcome"] == "ran");
  CHECK_THAT(listed["last_run"]["worker"].get<std::string>(), Catch::Contains("/" + std::to_string(::getpid())));
  const Ran table = weave_cli({"--url", url, "schedules", "list"});
  CHECK(table.code == 0);
  CHECK_THAT(table.out, Catch::Contains("cli-report") && Catch::Contains("running"));

  CHECK(weave_cli({"--url", url, "schedules", "pause", "cli-report"}).code == 0);
  CHECK(find(nlohmann::json::parse(weave_cli({"--url", url, "--json", "schedules"}).out))["paused"] == true);
  CHECK(weave::schedule_status("cli-report").paused);
  CHECK(weave_cli({"--url", url, "schedules", "resume", "cli-report"}).code == 0);
  CHECK_FALSE(weave::schedule_status("cli-report").paused);
  CHECK(weave_cli({"--url", url, "schedules", "pause"}).code == 2);  // no name: a bad command line
}

TEST_CASE("weave check and weave locks on redis+cluster:// reach every master") {
  cluster_test::Cluster& cluster = cluster_test::Cluster::shared();
  const Ran r = weave_cli({"--url", cluster.url(), "--json", "check"});
  REQUIRE(r.code == 0);
  const auto js = nlohmann::json::parse(r.out);
  CHECK(js["scheme"] == "redis+cluster");
  REQUIRE(js["masters"].size() == 3);
  for (const auto& m : js["masters"]) CHECK(m["mode"] == "cluster");

  // Locks on keys of different slots, all listed by one SCAN of each master.
  weave::LockClient locks({.url = cluster.url()});
  std::vector<weave::LeaseHandle> held;
  const std::string base = unique("cluster");
  for (int i = 0; i < 6; ++i) held.push_back(locks.acquire(base + ":" + std::to_string(i), {.ttl = 20s}));
  const auto listed = nlohmann::json::parse(weave_cli({"--url", cluster.url(), "--json", "locks", base + ":*"}).out);
  CHECK(listed.size() == 6);
  const Ran forced = weave_cli({"--url", cluster.url(), "unlock", base + ":3", "--force"});
  CHECK(forced.code == 0);
  CHECK_THROWS_AS(held[3].release(), weave::LeaseLost);
}

TEST_CASE("weave check on redis+sentinel:// reaches the master the sentinels name") {
  sentinel_test::Sentinels sentinels;
  const Ran r = weave_cli({"--url", sentinels.url(), "--json", "check"});
  REQUIRE(r.code == 0);
  const auto js = nlohmann::json::parse(r.out);
  CHECK(js["scheme"] == "redis+sentinel");
  REQUIRE(js["masters"].size() == 1);
  CHECK(js["masters"][0]["role"] == "master");
}

TEST_CASE("weave cache stats and evict, weave dedupe show, on what a woven service stored") {
  const std::string url = server().url();
  weave::configure_cache({.url = url});
  weave::configure_dedupe({.url = url});
  weave::Woven<clitest::Shop> woven;
  clitest::Shop& shop = woven;
  shop.price("ab");
  shop.price("xyz");
  shop.pay("o-1");

  auto stats = nlohmann::json::parse(weave_cli({"--url", url, "--json", "cache", "stats", "cli-price"}).out);
  CHECK(stats["stored_keys"] == 2);
  CHECK(shop.price("ab") == 2);  // a local hit
  CHECK(shop.loads == 2);
  const Ran evicted = weave_cli({"--url", url, "cache", "evict", "cli-price", "ab"});
  CHECK(evicted.code == 0);
  // The evicting process's invalidation reaches this one: its local copy goes, the next read loads again.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline && shop.loads == 2) {
    shop.price("ab");
    std::this_thread::sleep_for(10ms);
  }
  CHECK(shop.loads == 3);
  CHECK(weave_cli({"--url", url, "cache", "evict", "cli-price"}).code == 0);

  const auto shown = nlohmann::json::parse(weave_cli({"--url", url, "--json", "dedupe", "show", "cli-pay:o-1"}).out);
  CHECK(shown["state"] == "done");
  CHECK(shown["result"] == "30");
  CHECK(shown["expires_in_ms"] > 9 * 60 * 1000);
  CHECK(shown["age_ms"] >= 0);
  CHECK(shown["age_ms"] < 60 * 1000);
  CHECK(shown["age_ms"].get<long long>() + shown["expires_in_ms"].get<long long>() <= 10 * 60 * 1000 + 50);
  const Ran absent = weave_cli({"--url", url, "dedupe", "show", "cli-pay:o-2"});
  CHECK(absent.code == 1);
  CHECK_THAT(absent.err, Catch::Contains("no dedupe record"));
}

TEST_CASE("weave limits: the keys whose quota is spent ahead, and with --rate the permits each has left") {
  const std::string url = server().url();
  weave::RateLimiter limits({.url = url});
  const std::string a = unique("rl-a"), b = unique("rl-b"), idle = unique("rl-idle");
  const weave::RateLimit hourly{.permits = 10, .per = 1h};  // a permit every 6 min, 10 at once
  for (int i = 0; i < 3; ++i) REQUIRE(limits.try_acquire(a, hourly).admitted);
  REQUIRE(limits.try_acquire(b, hourly, 10).admitted);
  const std::string pattern = "cli-test:" + std::to_string(::getpid()) + ":rl-*";
  const Ran listed = weave_cli({"--url", url, "--json", "limits", pattern, "--rate", "10/h"});
  INFO(listed.err);
  REQUIRE(listed.code == 0);
  const auto js = nlohmann::json::parse(listed.out);
  REQUIRE(js.size() == 2);  // the idle key holds nothing
  CHECK(js[0]["key"] == a);
  CHECK(js[0]["spent_ahead_us"] > 17 * 60 * 1000000LL);  // 3 permits: 18 min ahead, less the test's time
  CHECK(js[0]["spent_ahead_us"] <= 18 * 60 * 1000000LL);
  CHECK(js[0]["left"] == 7);
  CHECK(js[1]["key"] == b);
  CHECK(js[1]["left"] == 0);
  const Ran table = weave_cli({"--url", url, "limits", pattern});
  CHECK(table.code == 0);
  CHECK_THAT(table.out, Catch::StartsWith("KEY"));
  CHECK_THAT(table.out, Catch::Contains(a));
  CHECK_THAT(table.out, !Catch::Contains("LEFT"));
  const Ran bad = weave_cli({"--url", url, "limits", "--rate", "10/sec"});
  CHECK(bad.code == 1);
  CHECK_THAT(bad.err, Catch::Contains("unknown duration unit 'sec'"));
}

TEST_CASE("weave permits: each semaphore's holders by fencing token, and its waiters") {
  const std::string url = server().url();
  weave::Semaphore semaphores({.url = url});
  const std::string key = unique("sem-a");
  weave::Permit first = semaphores.acquire(key, {.permits = 2});
  weave::Permit second = semaphores.acquire(key, {.permits = 2});
  const std::string pattern = "cli-test:" + std::to_string(::getpid()) + ":sem-*";
  const Ran listed = weave_cli({"--url", url, "--json", "permits", pattern});
  INFO(listed.err);
  REQUIRE(listed.code == 0);
  const auto js = nlohmann::json::parse(listed.out);
  REQUIRE(js.size() == 1);
  CHECK(js[0]["key"] == key);
  CHECK(js[0]["waiting"] == 0);
  REQUIRE(js[0]["holders"].size() == 2);
  CHECK(js[0]["holders"][0]["owner"] == first->owner_token());
  CHECK(js[0]["holders"][0]["fencing_token"] == first->fencing_token());
  CHECK(js[0]["holders"][1]["owner"] == second->owner_token());
  CHECK(js[0]["holders"][1]["expires_in_ms"] > 20 * 1000);
  const Ran table = weave_cli({"--url", url, "permits", pattern});
  CHECK(table.code == 0);
  CHECK_THAT(table.out, Catch::StartsWith("KEY"));
  CHECK_THAT(table.out, Catch::Contains(first->owner_token()));
  first.release();
  second.release();
  const Ran none = weave_cli({"--url", url, "--json", "permits", pattern});
  CHECK(nlohmann::json::parse(none.out).empty());
}

// The line of `out` that starts with `key` followed by a space.
std::string line_of(const std::string& out, const std::string& key) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + " ", 0) == 0) return line;
  return "(no line for " + key + ")";
}

TEST_CASE("weave config: every option in force and where it came from, --no-origin a file that loads back") {
  TempFile f(R"({"url": "redis://u:s3cr3t@127.0.0.1:6390", "cache": {"local_max_entries": 5000}})");
  ScopedEnv lease("WEAVE_DEDUPE_CLAIM_LEASE", "20s");
  const Ran shown = weave_cli({"--config", f.path(), "config"});
  REQUIRE(shown.code == 0);
  CHECK_THAT(line_of(shown.out, "cache.local_max_entries"),
             Catch::Contains(" 5000 ") && Catch::EndsWith("config file '" + f.path() + "'"));
  CHECK_THAT(line_of(shown.out, "dedupe.claim_lease"),
             Catch::Contains("\"20s\"") && Catch::EndsWith("environment WEAVE_DEDUPE_CLAIM_LEASE"));
  CHECK_THAT(line_of(shown.out, "queue.lease"), Catch::Contains("\"30s\"") && Catch::EndsWith("default"));
  CHECK_THAT(line_of(shown.out, "lock.url"), Catch::Contains("redis://u:***@127.0.0.1:6390"));
  CHECK(shown.out.find("s3cr3t") == std::string::npos);

  const Ran listed = weave_cli({"--config", f.path(), "--json", "config"});
  REQUIRE(listed.code == 0);
  const nlohmann::json all = nlohmann::json::parse(listed.out);
  CHECK(all.size() == 57);  // every option of the six features
  CHECK(all[0] == nlohmann::json({{"key", "lock.url"}, {"value", "redis://u:***@127.0.0.1:6390"},
                                  {"origin", "config file '" + f.path() + "'"}}));

  // As a file: loading it gives the same values (the password aside, masked).
  const Ran as_file = weave_cli({"--config", f.path(), "config", "--no-origin"});
  REQUIRE(as_file.code == 0);
  TempFile again(as_file.out);
  ScopedEnv no_lease("WEAVE_DEDUPE_CLAIM_LEASE", std::nullopt);
  const Ran reloaded = weave_cli({"--config", again.path(), "config", "--no-origin"});
  CHECK(reloaded.code == 0);
  CHECK(reloaded.out == as_file.out);
  CHECK(nlohmann::json::parse(as_file.out)["dedupe"]["claim_lease"] == "20s");

  TempFile bad(R"({"cache": {"pool_size": 0}})");
  const Ran refused = weave_cli({"--config", bad.path(), "config"});
  CHECK(refused.code == 1);
  CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
  CHECK_THAT(refused.err, Catch::Contains("config file '" + bad.path() + "': cache.pool_size: must be 1..1024, got 0"));
}
