// weave permits [PATTERN].
#include "commands.h"
#include "weave/semaphore.h"

namespace weave_cli {

void add_permits(CLI::App& app, Context& ctx) {
  static std::string pattern = "*";
  CLI::App* permits = app.add_subcommand(
      "permits", "Semaphores with holders or waiters: each holder's owner token, fencing token and time left, and "
                 "how many callers wait");
  permits->add_option("pattern", pattern, "Glob over the keys (*, ?, [...]); default: all");
  permits->callback([&ctx] {
    weave::Semaphore semaphores(ctx.options<weave::QuotaOptions>());
    std::vector<std::vector<std::string>> rows;
    nlohmann::json js = nlohmann::json::array();
    for (const weave::SemaphoreState& s : semaphores.list(pattern)) {
      nlohmann::json holders = nlohmann::json::array();
      for (const weave::PermitHolder& h : s.holders) {
        holders.push_back(
            {{"owner", h.owner}, {"fencing_token", h.fencing_token}, {"expires_in_ms", h.expires_in.count()}});
        rows.push_back({s.key, h.owner, std::to_string(h.fencing_token), readable(h.expires_in)});
      }
      if (s.holders.empty()) rows.push_back({s.key, "-", "-", "-"});
      rows.back().push_back(std::to_string(s.waiting));
      js.push_back({{"key", s.key}, {"holders", std::move(holders)}, {"waiting", s.waiting}});
    }
    ctx.out.table({"KEY", "OWNER", "FENCE", "EXPIRES IN", "WAITING"}, rows, js);
  });
}

}  // namespace weave_cli
