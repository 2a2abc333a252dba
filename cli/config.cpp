// weave config [--no-origin]: every option of every feature as the library
// loads it (weave::effective_config), and where each value came from.
#include <iostream>

#include "commands.h"

namespace weave_cli {

void add_config(CLI::App& app, Context& ctx) {
  static bool no_origin = false;
  CLI::App* config = app.add_subcommand(
      "config", "Every option of every feature in force here (defaults, the config file, the environment, --url) "
                "and where each came from; --no-origin prints it as a configuration file");
  config->add_flag("--no-origin", no_origin, "Print the values alone, as a JSON configuration file");
  config->callback([&ctx] {
    const std::vector<weave::ConfigSetting> settings = weave::effective_config(ctx.sources());
    nlohmann::ordered_json file = nlohmann::ordered_json::object();  // in the features' and fields' order
    nlohmann::json listed = nlohmann::json::array();
    std::vector<std::vector<std::string>> rows;
    for (const weave::ConfigSetting& s : settings) {
      const std::size_t dot = s.key.find('.');
      const nlohmann::json value = nlohmann::json::parse(s.value);
      file[s.key.substr(0, dot)][s.key.substr(dot + 1)] = value;
      listed.push_back({{"key", s.key}, {"value", value}, {"origin", s.origin}});
      rows.push_back({s.key, s.value, s.origin});
    }
    if (no_origin && !ctx.out.json) {
      std::cout << file.dump(2) << '\n';
      return;
    }
    ctx.out.table({"KEY", "VALUE", "ORIGIN"}, rows, no_origin ? nlohmann::json::parse(file.dump()) : listed);
  });
}

}  // namespace weave_cli
