// weave locks [PATTERN], weave unlock KEY [--force].
#include <iostream>

#include "commands.h"
#include "weave/lock.h"

namespace weave_cli {
namespace {

weave::LockClient client(const Context& ctx) {
  return weave::LockClient(ctx.options<weave::LockOptions>());
}

nlohmann::json holder_json(const weave::LockHolder& h) {
  return {{"owner", h.owner}, {"fencing_token", h.fencing_token}, {"expires_in_ms", h.expires_in.count()}};
}

}  // namespace

void add_locks(CLI::App& app, Context& ctx) {
  static std::string pattern = "*";
  CLI::App* locks = app.add_subcommand("locks", "Every lock held or waited for: holders (owner, fencing token, "
                                                "lease left), the line, the fencing counter");
  locks->add_option("pattern", pattern, "Glob over lock keys (*, ?, [...]); default: all");
  locks->callback([&ctx] {
    const std::vector<weave::LockState> all = client(ctx).locks(pattern);
    std::vector<std::vector<std::string>> rows;
    nlohmann::json js = nlohmann::json::array();
    for (const weave::LockState& s : all) {
      nlohmann::json holders = nlohmann::json::array();
      for (const weave::LockHolder& h : s.holders) holders.push_back(holder_json(h));
      js.push_back({{"key", s.key}, {"type", s.read ? "read" : "exclusive"}, {"holders", holders},
                    {"line", s.line}, {"fence", s.fence}});
      const std::string waiting = std::to_string(s.line.size());
      if (s.holders.empty()) rows.push_back({s.key, "free", "-", "-", "-", waiting, std::to_string(s.fence)});
      for (const weave::LockHolder& h : s.holders)
        rows.push_back({s.key, s.read ? "read" : "exclusive", h.owner, std::to_string(h.fencing_token),
                        readable(h.expires_in), waiting, std::to_string(s.fence)});
    }
    ctx.out.table({"KEY", "TYPE", "OWNER", "TOKEN", "LEFT", "WAITING", "FENCE"}, rows, js);
  });

  static std::string key;
  static bool force = false;
  CLI::App* unlock = app.add_subcommand(
      "unlock", "Free a stuck lock: its holders find their lease lost and the fencing counter moves past their "
                "tokens. Without --force, shows what it would free");
  unlock->add_option("key", key, "The lock's key (as written in code, without the key prefix)")->required();
  unlock->add_flag("--force", force, "Free it");
  unlock->callback([&ctx] {
    weave::LockClient c = client(ctx);
    if (!force) {
      const std::optional<weave::LockState> found = c.lock_state(key);
      nlohmann::json holders = nlohmann::json::array();
      std::string text;
      if (found)
        for (const weave::LockHolder& h : found->holders) {
          holders.push_back(holder_json(h));
          text += "  " + h.owner + " (fencing token " + std::to_string(h.fencing_token) + ", " +
                  readable(h.expires_in) + " left)\n";
        }
      ctx.out.say(holders.empty() ? "'" + key + "' is not held: nothing to free"
                                  : "would free '" + key + "' held by:\n" + text + "run again with --force to free it",
                  {{"key", key}, {"would_free", holders}, {"forced", false}});
      return;
    }
    const weave::ForcedRelease r = c.force_unlock(key);
    nlohmann::json freed = nlohmann::json::array();
    std::string text;
    for (const weave::LockHolder& h : r.freed) {
      freed.push_back(holder_json(h));
      text += "  " + h.owner + " (fencing token " + std::to_string(h.fencing_token) + ")\n";
    }
    ctx.out.say((r.freed.empty() ? "'" + key + "' was not held; " : "freed '" + key + "' from:\n" + text) +
                    "fencing counter now " + std::to_string(r.fence),
                {{"key", key}, {"freed", freed}, {"fence", r.fence}, {"forced", true}});
  });
}

}  // namespace weave_cli
