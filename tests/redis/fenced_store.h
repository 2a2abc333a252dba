// A resource that uses fencing tokens: a value in Redis that refuses writes
// carrying a token older than the newest it has accepted (the check and the
// write are one Lua script, so they cannot interleave with another writer).
#pragma once

#include <cstdint>
#include <string>

#include "redis_server.h"

namespace redis_test {

class FencedStore {
 public:
  FencedStore(Raw& conn, std::string name) : conn_(conn), name_(std::move(name)) {}

  // True when accepted; false when `token` is older than one already seen.
  bool write(std::uint64_t token, const std::string& value) {
    static const char* script = R"lua(
local newest = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) < newest then return 0 end
redis.call('SET', KEYS[2], ARGV[1])
redis.call('SET', KEYS[1], ARGV[2])
return 1
)lua";
    return conn_.cmd({"EVAL", script, "2", name_ + ":value", name_ + ":newest-token", std::to_string(token), value})
               .integer == 1;
  }
  std::string value() { return conn_.cmd({"GET", name_ + ":value"}).str; }

 private:
  Raw& conn_;
  std::string name_;
};

}  // namespace redis_test
