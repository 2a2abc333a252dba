// The least Redis ACL rule Weave needs (weave/redis_acl.h), and what a
// refusal by the ACL says to do.
#include "store/acl.h"

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
    "time", "del", "exists", "pexpire",                                        // inside scripts
    "incr", "incrby", "hget", "hmget", "hset", "hdel", "hincrby",              // inside scripts
    "lindex", "lpop", "lrem", "rpush",                                         // inside scripts (fair locks)
    "zadd", "zrem", "zcard", "zcount", "zrange", "zrangebyscore", "zremrangebyscore", "zscore",  // (queues, locks)
};

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

std::string acl_hint(std::string_view reply) {
  constexpr std::string_view script_refused = "can't run this command or subcommand";
  const bool noperm = reply.substr(0, 7) == "NOPERM ";
  if (!noperm && reply.find(script_refused) == std::string_view::npos) return {};
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
