#include "dedupe/claim_store.h"

#include <charconv>

namespace WEAVE_NAMESPACE::detail {

void DedupeRecord::encode_to(std::string& out, char kind, std::string_view match, std::string_view rest) {
  char size[24];
  char* end = std::to_chars(size, size + sizeof size, match.size()).ptr;
  out += kind;
  out += '|';
  out.append(size, static_cast<std::size_t>(end - size));
  out += '|';
  out += match;
  out += rest;
}

std::string DedupeRecord::encode() const {
  std::string out;
  out.reserve(match.size() + rest.size() + 24);
  encode_to(out, kind, match, rest);
  return out;
}

bool DedupeRecord::decode(std::string_view text, DedupeRecord& out) {
  if (text.size() < 4 || text[1] != '|') return false;
  const char kind = text[0];
  if (kind != 'r' && kind != 'd' && kind != 'e') return false;
  const auto bar = text.find('|', 2);
  if (bar == std::string_view::npos) return false;
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(text.data() + 2, text.data() + bar, n);
  if (ec != std::errc() || end != text.data() + bar || n > text.size() - bar - 1) return false;
  out.kind = kind;
  out.match.assign(text.substr(bar + 1, n));
  out.rest.assign(text.substr(bar + 1 + n));
  return true;
}

}  // namespace weave::detail
