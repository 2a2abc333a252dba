// What every Redis store of the suites shares (store_under_test.h): not
// mem://, and write_raw() / read_raw() through the store layer.
#include "store_under_test.h"

#include "store/open.h"
#include "store/reply.h"

extern "C" bool test_store_is_mem() { return false; }

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
