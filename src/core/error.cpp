#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {

void name_key(Error& e, std::string_view key, std::string_view kind) {
  if (!e.key_.empty()) return;
  e.key_.assign(key);
  // Errors made for the key say it in their own words already.
  if (e.message_.find("'" + e.key_ + "'") != std::string::npos) return;
  e.message_ += " (" + std::string(kind) + " '" + e.key_ + "')";
}

void name_where(Error& e, std::string_view where) {
  e.message_ += " (" + std::string(where) + ")";
}

}  // namespace weave::detail
