// weave cache stats|evict NAME [KEY].
#include "commands.h"
#include "weave/cache.h"

namespace weave_cli {

void add_cache(CLI::App& app, Context& ctx) {
  static std::string name, key;
  CLI::App* cache = app.add_subcommand("cache", "A [[cache]] name's shared tier: its keys, evictions");
  cache->require_subcommand(1);
  auto open = [&ctx] { weave::configure_cache(ctx.options<weave::CacheOptions>()); };

  CLI::App* stats = cache->add_subcommand(
      "stats", "Keys of the cache in the shared tier now (per-process hits and misses: weave::write_metrics())");
  stats->add_option("name", name, "The cache's name (name= of [[cache]])")->required();
  stats->callback([&ctx, open] {
    open();
    const std::uint64_t n = weave::cache_stored_keys(name);
    ctx.out.table({"CACHE", "STORED KEYS"}, {{name, std::to_string(n)}}, {{"cache", name}, {"stored_keys", n}});
  });

  CLI::App* evict = cache->add_subcommand(
      "evict", "Drop KEY (every key without one) from the shared tier and every process's local tier");
  evict->add_option("name", name, "The cache's name")->required();
  evict->add_option("key", key, "The rendered key (as its key template makes it); none: every key");
  evict->callback([&ctx, open] {
    open();
    if (key.empty())
      weave::cache_evict(name);
    else
      weave::cache_evict(name, key);
    ctx.out.say(key.empty() ? "evicted every key of '" + name + "'" : "evicted '" + key + "' of '" + name + "'",
                {{"cache", name}, {"key", key}, {"evicted", true}});
  });
}

}  // namespace weave_cli
