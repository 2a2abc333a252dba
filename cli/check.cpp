// weave check: connectivity, version and mode, topology, round trip, and the
// ACL: every command Weave needs, and the minimal rule.
#include <iostream>

#include "commands.h"
#include "weave/redis_acl.h"
#include "weave/store_check.h"

namespace weave_cli {

void add_check(CLI::App& app, Context& ctx) {
  CLI::App* check = app.add_subcommand(
      "check", "Reach every master, show its version, mode and round trip, and check the user's ACL against "
               "every command Weave needs; prints the minimal ACL rule");
  check->callback([&ctx] {
    const std::string url = ctx.store_url();
    const weave::StoreCheck c = weave::check_store(url);
    const std::string rule = weave::redis_acl_rule();
    nlohmann::json masters = nlohmann::json::array();
    std::vector<std::vector<std::string>> rows;
    for (const weave::StoreNode& m : c.masters) {
      rows.push_back({m.address, m.version.empty() ? "?" : m.version, m.mode.empty() ? "?" : m.mode, m.role,
                      readable(m.round_trip)});
      masters.push_back({{"address", m.address}, {"version", m.version}, {"mode", m.mode}, {"role", m.role},
                         {"round_trip_us", m.round_trip.count()}});
    }
    if (ctx.out.json) {
      std::cout << nlohmann::json{{"scheme", c.scheme}, {"masters", masters}, {"acl_refused", c.refused},
                                  {"acl_rule", rule}, {"ok", c.refused.empty()}}
                       .dump(2)
                << '\n';
    } else {
      std::cout << c.scheme << ": " << c.masters.size() << (c.masters.size() == 1 ? " master" : " masters") << '\n';
      ctx.out.table({"MASTER", "VERSION", "MODE", "ROLE", "ROUND TRIP"}, rows, {});
      if (c.refused.empty()) {
        std::cout << "ACL: the user may run every command Weave needs\n";
      } else {
        std::cout << "ACL: the user may not run:";
        for (const std::string& r : c.refused) std::cout << ' ' << r;
        std::cout << "\n  add them to its rule\n";
      }
      std::cout << "minimal rule: " << rule << '\n';
    }
    if (!c.refused.empty()) throw std::runtime_error("the user's ACL refuses commands Weave needs (above)");
  });
}

}  // namespace weave_cli
