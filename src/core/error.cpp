#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {

void name_key(Error& e, std::string_view key) {
  if (!e.key_.empty()) return;
  e.key_.assign(key);
  // LockError subtypes say the key in their own words already.
  if (e.message_.find("'" + e.key_ + "'") != std::string::npos) return;
  e.message_ += " (lock '" + e.key_ + "')";
}

}  // namespace weave::detail
