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
  // The lock store's URL as the library resolves it. A UsageError for mem://:
  // an in-process store is not reachable from another process.
  std::string store_url() const;
  // A feature's store as the library resolves it: --url, else its own
  // variable (WEAVE_QUEUE_URL, ...), else store_url().
  std::string url_for(const char* own_env) const;
};

void add_check(CLI::App& app, Context& ctx);
void add_locks(CLI::App& app, Context& ctx);  // locks, unlock
void add_queue(CLI::App& app, Context& ctx);
void add_cache(CLI::App& app, Context& ctx);
void add_dedupe(CLI::App& app, Context& ctx);

}  // namespace weave_cli
