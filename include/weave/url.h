// weave/url.h — where a feature keeps its state: one typed URL for every
// store, parsed in one place.
//
//   weave::StoreUrl u = weave::parse_store_url("redis+sentinel://s1,s2:26380/orders/2");
//   // u.scheme == "redis+sentinel", u.name == "orders", u.db == 2,
//   // u.hosts == {{"s1", 26379}, {"s2", 26380}}
//
// Schemes: mem://[name] (in-process, the default), redis://host[:port][/db],
// redis+cluster://h1[:p1],h2[:p2],..., redis+sentinel://s1[:p1],.../<master>[/db],
// redlock://h1[:p1],h2[:p2],h3[:p3][/db]; each may carry user:password@ before
// the hosts (%-escaped). Which schemes work depends on the libraries linked
// (Weave::redis brings the Redis ones).
#pragma once

#include "weave/abi.h"

#include <string>
#include <string_view>
#include <vector>

namespace WEAVE_NAMESPACE {

struct WEAVE_API StoreUrl {
  struct Host {
    std::string host;  // without the brackets of an IPv6 address
    int port = 0;      // as written, else the scheme's default (see hosts)
  };
  std::string scheme;  // "mem", "redis", ...
  std::string name;    // mem: table name ("" = the default table); redis+sentinel: the master's name
  std::string user, password;
  // Every host, in order, each port defaulted in this one place: 6379 for
  // redis, redis+cluster and redlock, 26379 for redis+sentinel (the
  // sentinels), 0 (none) for other schemes. No host appears twice.
  std::vector<Host> hosts;
  std::string host;  // the first host; several: the list as written ("h1:p1,[::1]:p2")
  int port = 0;      // the first host's port; 0 for a list
  int db = 0;
};

// Throws ConfigError naming the URL (its password masked) and the problem.
// Does not check that the scheme is one this program can use (the feature
// that opens it does).
WEAVE_API StoreUrl parse_store_url(std::string_view url);

// The URL as Weave shows it in every error, event and tool output: the
// password of `user:password@` replaced by `***` ("redis://u:***@host:6379"),
// the rest as written. Works on text that does not parse, too.
WEAVE_API std::string redact_url(std::string_view url);

}  // namespace weave
