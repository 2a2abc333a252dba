#include "store/open.h"

#include "store/cluster_executor.h"
#include "store/sentinel_executor.h"
#include "weave/url.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::store {

Endpoint endpoint_from(const StoreUrl& url, const StoreUrl::Host& host, const ConnectionSettings& settings) {
  Endpoint ep;
  ep.host = host.host;
  ep.port = host.port;
  ep.user = url.user;
  ep.password = url.password;
  ep.db = url.db;
  ep.connect_timeout = settings.connect_timeout;
  ep.command_timeout = settings.command_timeout;
  return ep;
}

std::vector<Endpoint> endpoints_from(const StoreUrl& url, const ConnectionSettings& settings) {
  std::vector<Endpoint> out;
  for (const auto& host : url.hosts) out.push_back(endpoint_from(url, host, settings));
  return out;
}

std::shared_ptr<Executor> open_executor(std::string_view text, const ConnectionSettings& settings) {
  const StoreUrl url = parse_store_url(text);
  const std::string quoted = "url '" + redact_url(text) + "'";
  if (url.scheme == "redis") {
    if (url.hosts.size() != 1)
      throw ConfigError(quoted + ": redis:// takes one host; several are redlock:// (independent masters) or "
                        "redis+cluster:// (one cluster)");
    return std::make_shared<NodeExecutor>(endpoint_from(url, url.hosts.front(), settings), settings.pool_size);
  }
  if (url.scheme == "redis+cluster") {
    if (url.db != 0) throw ConfigError(quoted + ": Redis Cluster has only database 0");
    return std::make_shared<ClusterExecutor>(endpoints_from(url, settings), settings.pool_size);
  }
  if (url.scheme == "redis+sentinel") {
    std::vector<Endpoint> sentinels;
    for (const auto& host : url.hosts) {
      Endpoint ep;  // sentinels: no credentials or db (those are the master's)
      ep.host = host.host;
      ep.port = host.port;
      ep.connect_timeout = settings.connect_timeout;
      ep.command_timeout = settings.command_timeout;
      sentinels.push_back(std::move(ep));
    }
    Endpoint data;
    data.user = url.user;
    data.password = url.password;
    data.db = url.db;
    data.connect_timeout = settings.connect_timeout;
    data.command_timeout = settings.command_timeout;
    return std::make_shared<SentinelExecutor>(std::move(sentinels), url.name, std::move(data), settings.pool_size);
  }
  throw ConfigError(quoted + ": not a single Redis store (redis://, redis+cluster:// or redis+sentinel://)");
}

}  // namespace weave::store
