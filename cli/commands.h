// What every `weave` command is given, and where each group registers.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "output.h"
#include "weave/config.h"

namespace weave_cli {

struct Context {
  std::optional<std::string> url;     // --url: every feature's store
  std::optional<std::string> config;  // --config: the JSON file (else $WEAVE_CONFIG)
  Output out;

  // The sources the library reads (weave/config.h), with --url and --config on top.
  weave::ConfigSources sources() const { return {.url = url, .file = config}; }
  // The lock store's URL as the library resolves it. An error for mem://:
  // an in-process store is not reachable from another process.
  std::string store_url() const;
  // A feature's options as the library loads them (weave::load_options,
  // one read of the sources): its URL is the one the feature's library would
  // use. An error for mem://, as store_url().
  template <class Options>
  Options options() const {
    Options o = weave::load_options<Options>(sources());
    require_remote(o.url, std::string(Options::config_section) + ".url");
    return o;
  }
  static void require_remote(const std::string& url, const std::string& what);
};

void add_check(CLI::App& app, Context& ctx);
void add_locks(CLI::App& app, Context& ctx);  // locks, unlock
void add_queue(CLI::App& app, Context& ctx);
void add_cache(CLI::App& app, Context& ctx);
void add_dedupe(CLI::App& app, Context& ctx);
void add_config(CLI::App& app, Context& ctx);
void add_limits(CLI::App& app, Context& ctx);
void add_permits(CLI::App& app, Context& ctx);
void add_schedules(CLI::App& app, Context& ctx);

}  // namespace weave_cli
