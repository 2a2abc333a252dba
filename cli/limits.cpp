// weave limits [PATTERN] [--rate R --burst B].
#include <stdexcept>

#include "commands.h"
#include "weave/rate_limit.h"

namespace weave_cli {

void add_limits(CLI::App& app, Context& ctx) {
  static std::string pattern = "*", rate;
  static std::uint64_t burst = 0;
  CLI::App* limits = app.add_subcommand(
      "limits", "Rate-limited keys whose quota is spent ahead of now: how far ahead (it refills by then), and with "
                "--rate the permits each has left");
  limits->add_option("pattern", pattern, "Glob over the keys (*, ?, [...]); default: all");
  limits->add_option("--rate", rate, "The keys' rate as in [[rate_limit(rate=...)]] (100/s, 6000/min): adds LEFT");
  limits->add_option("--burst", burst, "The keys' burst (default: the rate's permits)");
  limits->callback([&ctx] {
    std::optional<weave::RateLimit> limit;
    if (!rate.empty()) {
      const weave::RateParse parsed = weave::parse_rate_text(rate);
      if (!parsed) throw std::runtime_error("--rate: " + parsed.error);
      limit = parsed.limit;
      limit->burst = burst;  // 0: the rate's permits
    } else if (burst != 0) {
      throw std::runtime_error("--burst needs --rate");
    }
    weave::RateLimiter limiter(ctx.options<weave::QuotaOptions>());
    std::vector<std::vector<std::string>> rows;
    nlohmann::json js = nlohmann::json::array();
    for (const weave::RateLimitState& s : limiter.list(pattern)) {
      nlohmann::json j = {{"key", s.key}, {"spent_ahead_us", s.spent_ahead.count()}};
      std::vector<std::string> row = {s.key, readable(s.spent_ahead)};
      if (limit) {
        const std::uint64_t left = weave::permits_left(*limit, s.spent_ahead);
        j["left"] = left;
        row.push_back(std::to_string(left));
      }
      js.push_back(std::move(j));
      rows.push_back(std::move(row));
    }
    std::vector<std::string> header = {"KEY", "SPENT AHEAD"};
    if (limit) header.push_back("LEFT");
    ctx.out.table(header, rows, js);
  });
}

}  // namespace weave_cli
