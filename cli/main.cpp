// weave: see and repair what Weave keeps in Redis (docs/operations.md).
//   weave [--url URL] [--config FILE] [--json] <command> ...
// Exit codes as redis-cli and git: 0 done, 1 failed (one "weave: ..." line
// on stderr), 2 usage.
#include <cstdio>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string_view>

#include "commands.h"
#include "weave/error.h"
#include "weave/lock.h"

namespace weave_cli {

std::string Context::store_url() const {
  const std::string resolved = weave::load_lock_options(sources()).url;
  require_remote(resolved, "lock.url");
  return resolved;
}

void Context::require_remote(const std::string& url, const std::string& what) {
  if (url.rfind("mem://", 0) == 0)
    throw std::runtime_error("the configured store (" + what + ") is " + url +
                             " (in-process): nothing to see from another process; give --url, WEAVE_URL or "
                             "WEAVE_CONFIG (`weave config` shows where each value comes from)");
}

}  // namespace weave_cli

int main(int argc, char** argv) {
  weave_cli::Context ctx;
  CLI::App app{"weave: see and repair the locks, queues, caches, duplicate guards, rate limits, semaphores and schedules Weave keeps in Redis", "weave"};
  app.require_subcommand(1);
  app.add_option("--url", ctx.url, "The store (redis://, redis+cluster://, redis+sentinel://); default: as the library "
                                   "reads it (WEAVE_LOCK_URL, WEAVE_URL, the config file)");
  app.add_option("--config", ctx.config, "Weave's JSON configuration file (default: $WEAVE_CONFIG)");
  app.add_flag("--json", ctx.out.json, "Print JSON for scripts");
  weave_cli::add_check(app, ctx);
  weave_cli::add_locks(app, ctx);
  weave_cli::add_queue(app, ctx);
  weave_cli::add_cache(app, ctx);
  weave_cli::add_dedupe(app, ctx);
  weave_cli::add_config(app, ctx);
  weave_cli::add_limits(app, ctx);
  weave_cli::add_permits(app, ctx);
  weave_cli::add_schedules(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const std::exception& e) {
    // One line; the library's messages name themselves ("weave redis: ...").
    const std::string_view what = e.what();
    std::cerr << (what.rfind("weave", 0) == 0 ? "" : "weave: ") << what << '\n';
    return 1;
  }
  return 0;
}
