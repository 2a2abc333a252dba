#include "queue/delay_call.h"

#include <charconv>

#include <nlohmann/json.hpp>

#include "weave/json_codec.h"

namespace WEAVE_NAMESPACE::detail {

std::string encode_delay_call(std::string_view method, std::uint64_t signature_hash, std::string_view args) {
  char hex[17];
  const auto end = std::to_chars(hex, hex + 16, signature_hash, 16).ptr;
  std::string out = R"({"m":)";
  out += nlohmann::json(std::string(method)).dump();
  out += R"(,"s":")";
  out.append(hex, end);
  out += R"(","a":)";
  out += args;
  out += '}';
  return out;
}

bool decode_delay_call(std::string_view text, DelayCall& out) {
  if (json_deeper_than(text, kMaxJsonDepth)) return false;  // dump() below would recurse as deep
  // JSON holds no raw NUL, and nlohmann's reader would end the text at one:
  // a call followed by a NUL and anything else is not a stored call.
  if (text.find('\0') != std::string_view::npos) return false;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("m") || !j["m"].is_string() || !j.contains("s") || !j["s"].is_string() ||
      !j.contains("a") || !j["a"].is_array())
    return false;
  const std::string& hash = j["s"].get_ref<const std::string&>();
  const auto r = std::from_chars(hash.data(), hash.data() + hash.size(), out.signature_hash, 16);
  if (r.ec != std::errc() || r.ptr != hash.data() + hash.size()) return false;
  out.method = j["m"].get<std::string>();
  out.args = j["a"].dump();
  return true;
}

}  // namespace weave::detail
