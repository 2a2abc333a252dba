// The least Redis ACL rule Weave needs (weave/redis_acl.h), and what a
// refusal by the ACL says to do.
#include "store/acl.h"

#include <iterator>
#include <utility>
#include <vector>

#include "store/executor.h"
#include "store/reply.h"
#include "weave/redis_acl.h"

namespace WEAVE_NAMESPACE {
namespace {

// Every command Weave sends, and every command its scripts run (one line
// per reason; docs/redis.md, "ACL", says the same).
constexpr std::string_view kCommands[] = {
    "ping", "select",                                                          // connection check, db
    "eval", "evalsha", "script|load",                                          // every feature's scripts
    "subscribe", "unsubscribe", "ssubscribe", "sunsubscribe",                  // wake-ups, invalidations
    "publish", "spublish",                                                     // (also inside scripts)
    "get", "set", "pttl", "scan",                                              // cache reads, dedupe claims, evict all
    "asking", "cluster|slots", "role",                                         // cluster routing, Sentinel's master check
    "blpop",                                                                   // a waiting thread's own inbox
    "time", "del", "exists", "pexpire",                                        // inside scripts
    "incr", "incrby", "hget", "hmget", "hset", "hdel", "hincrby", "hgetall",   // inside scripts
    "lindex", "lpop", "lrem", "rpush",                                         // inside scripts (fair locks)
    "zadd", "zrem", "zcard", "zcount", "zrange", "zrangebyscore", "zremrangebyscore", "zscore",  // (queues, locks,
    "zrank",                                                                                      //  semaphores)
};

// How check_store() tries each of them: the first `kSentDirectly` are sent
// as commands (the subscriptions on a connection of their own), the rest
// from one probe script with redis.pcall. Probe keys and channel are under
// "{weave:check}" (covered by the default patterns; cleaned up after).
constexpr std::size_t kSentDirectly = 19;
static_assert(kCommands[kSentDirectly] == "time");

constexpr const char* kProbeKey = "{weave:check}:probe";
constexpr const char* kProbeScript = R"lua(
local k, h, l, z = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local refused = {}
local function try(name, ...)
  local r = redis.pcall(name, ...)
  if type(r) == 'table' and r.err and (string.find(r.err, 'NOPERM', 1, true) or
                                        string.find(r.err, "can't run this command", 1, true)) then
    refused[#refused + 1] = name
  end
end
try('time'); try('del', k); try('exists', k); try('pexpire', k, 1000)
try('incr', k); try('incrby', k, 1)
try('hget', h, 'f'); try('hmget', h, 'f'); try('hset', h, 'f', '1'); try('hdel', h, 'f'); try('hincrby', h, 'f', 1)
try('hgetall', h)
try('lindex', l, 0); try('lpop', l); try('lrem', l, 0, 'x'); try('rpush', l, 'x')
try('zadd', z, 1, 'm'); try('zrem', z, 'm'); try('zcard', z); try('zcount', z, '-inf', '+inf')
try('zrange', z, 0, -1); try('zrangebyscore', z, '-inf', '+inf'); try('zremrangebyscore', z, '-inf', '+inf')
try('zscore', z, 'm'); try('zrank', z, 'm')
redis.pcall('del', k, h, l, z)
return refused
)lua";

// What a script's call says when the ACL refuses one of its commands.
constexpr std::string_view kScriptRefused = "can't run this command";

bool is_noperm(std::string_view error) { return error.starts_with("NOPERM "); }

// An error reply of the ACL: NOPERM, or a script's refused command.
bool refused_by_acl(std::string_view error) {
  return is_noperm(error) || error.find(kScriptRefused) != std::string_view::npos;
}

}  // namespace

std::string redis_acl_rule(std::initializer_list<std::string_view> key_prefixes) {
  std::string rule;
  for (std::string_view p : key_prefixes) rule.append("~{").append(p).append("* ");
  for (std::string_view p : key_prefixes) rule.append("&{").append(p).append("* ");
  rule.append("-@all");
  for (std::string_view c : kCommands) rule.append(" +").append(c);
  return rule;
}

namespace store {

std::vector<std::string> refused_commands(NodeExecutor& node) {
  const Endpoint& e = node.endpoint();
  const std::string probe_key = kProbeKey, channel = std::string(kProbeKey) + ":channel";
  const std::string db = std::to_string(e.db);
  std::vector<std::string> refused;
  auto note = [&](std::string_view command, const Reply& reply) {
    if (refused_by_acl(ReplyView(reply, "check").error())) refused.push_back(std::string("+").append(command));
  };
  // One connection of its own: subscriptions change a connection's mode.
  {
    Connection own(e);
    note("subscribe", own.command(Command{"SUBSCRIBE", channel}));
    note("unsubscribe", own.command(Command{"UNSUBSCRIBE", channel}));
    note("ssubscribe", own.command(Command{"SSUBSCRIBE", channel}));
    note("sunsubscribe", own.command(Command{"SUNSUBSCRIBE", channel}));
  }
  const char* script = "return 1";
  const std::pair<std::string_view, Command> sent[] = {
      {"ping", Command{"PING"}},
      {"select", Command{"SELECT", db}},
      {"eval", Command{"EVAL", script, "0"}},
      {"script|load", Command{"SCRIPT", "LOAD", script}},
      {"evalsha", Command{"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"}},  // SHA-1 of "return 1"
      {"publish", Command{"PUBLISH", channel, "check"}},
      {"spublish", Command{"SPUBLISH", channel, "check"}},
      {"get", Command{"GET", probe_key}},
      {"set", Command{"SET", probe_key, "check", "PX", "1000"}},
      {"pttl", Command{"PTTL", probe_key}},
      {"scan", Command{"SCAN", "0", "MATCH", probe_key, "COUNT", "1"}},
      {"asking", Command{"ASKING"}},
      {"cluster|slots", Command{"CLUSTER", "SLOTS"}},
      {"role", Command{"ROLE"}},
      // (the probe key holds a string by now: WRONGTYPE at once, never a wait)
      {"blpop", Command{"BLPOP", probe_key, "0.01"}},
  };
  for (const auto& [command, c] : sent) note(command, node.command(c));
  static_assert(std::size(sent) + 4 == kSentDirectly);
  const std::string h = probe_key + ":h", l = probe_key + ":l", z = probe_key + ":z";
  const Reply in_script =
      node.command(Command{"EVAL", kProbeScript, "4", probe_key, h, l, z});
  const ReplyView r(in_script, "check");
  if (r.is_array()) {
    for (std::size_t i = 0; i < r.size(); ++i) refused.push_back(std::string("+").append(r[i].text()));
  } else {
    // A cluster master that does not serve the probe keys' slot: the one
    // that does tries them. (A refused EVAL is reported above.)
    const std::string_view error = r.error();
    const bool elsewhere = error.starts_with("MOVED ") || error.starts_with("ASK ");
    if (!refused_by_acl(error) && !elsewhere) r.unexpected();
  }
  return refused;
}

std::string acl_hint(std::string_view reply) {
  if (!refused_by_acl(reply)) return {};
  const bool noperm = is_noperm(reply);
  std::string hint = "the Redis user's ACL refused it: ";
  const std::size_t q = reply.find(" to run the '");
  if (noperm && q != std::string_view::npos) {
    const std::size_t from = q + 13, to = reply.find('\'', from);
    hint.append("add +").append(reply.substr(from, to - from)).append(" to its rule");
  } else if (noperm) {
    hint.append("its key and channel patterns must cover Weave's keys and channels");
  } else {
    hint.append("one of the commands this script runs is not allowed");
  }
  hint.append("; Weave's whole rule is: ").append(redis_acl_rule()).append(" (docs/redis.md, \"ACL\")");
  return hint;
}

}  // namespace store
}  // namespace weave
