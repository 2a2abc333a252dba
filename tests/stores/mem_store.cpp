// A feature suite on mem://, in this process (store_under_test.h).
#include "store_under_test.h"

#include <stdexcept>

std::string test_store_url() { return "mem://store-suite"; }
extern "C" bool test_store_is_mem() { return true; }

namespace {
[[noreturn]] void redis_only(const char* what) {
  throw std::logic_error(std::string(what) + ": a [redis] case's helper, called on mem://");
}
}  // namespace

std::string test_admin_url() { redis_only("test_admin_url"); }
void write_raw(const std::string&, const std::string&) { redis_only("write_raw"); }
std::optional<std::string> read_raw(const std::string&) { redis_only("read_raw"); }
