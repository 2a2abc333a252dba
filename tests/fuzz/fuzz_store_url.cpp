// parse_store_url on any text: a StoreUrl or a ConfigError, never a crash;
// redact_url never shows the password the parser found, and neither does the
// error of a URL whose userinfo parsed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "weave/error.h"
#include "weave/url.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string shown = weave::redact_url(text);
  try {
    const weave::StoreUrl u = weave::parse_store_url(text);
    // The password the parser found, as written (no %-escape in it), is the
    // text between the first ':' of the userinfo and its last '@': the shown
    // URL is the same text with exactly that replaced by the mask.
    if (!u.password.empty() && text.find('%') == std::string_view::npos) {
      const std::size_t from = text.find("://") + 3, at = text.rfind('@');
      const std::size_t p = text.find(':', from) + 1;
      if (text.substr(p, at - p) != u.password) std::abort();
      if (shown != std::string(text.substr(0, p)) + "***" + std::string(text.substr(at))) std::abort();
    }
  } catch (const weave::ConfigError& e) {
    (void)e;
  }
  return 0;
}
