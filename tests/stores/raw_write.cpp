// write_raw() and read_raw() for every Redis store (store_under_test.h).
#define WEAVE_TEST_STORE_IS_MEM 0
#include "store_under_test.h"

#include "store/open.h"
#include "store/reply.h"

void write_raw(const std::string& key, const std::string& value) {
  auto exec = weave::store::open_executor(test_admin_url(), {});
  exec->command(weave::store::Command{"SET", key, value, "PX", "60000"}, key, "test write");
}

std::optional<std::string> read_raw(const std::string& key) {
  auto exec = weave::store::open_executor(test_admin_url(), {});
  const weave::store::Reply r = exec->command(weave::store::Command{"GET", key}, key, "test read");
  const weave::store::ReplyView value(r, "test read");
  if (value.nil()) return std::nullopt;
  return std::string(value.text());
}
