// [[dedupe]]'s stored record, DedupeRecord::decode (src/dedupe/record.cpp),
// "<kind>|<match size>|<match><rest>". Oracle: any text decodes to a record
// or false, never a crash; a decoded record has kind r, d or e and its match
// and rest are the text's, and it encodes to text that decodes to the same
// record (the same text when its size was written without leading zeros);
// a record built from parts of the input (first byte: kind, then match and
// rest split at the first NUL) decodes back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dedupe/claim_store.h"

using weave::detail::DedupeRecord;

namespace {
bool same(const DedupeRecord& a, const DedupeRecord& b) {
  return a.kind == b.kind && a.match == b.match && a.rest == b.rest;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  DedupeRecord r;
  if (DedupeRecord::decode(in, r)) {
    if (r.kind != 'r' && r.kind != 'd' && r.kind != 'e') std::abort();
    if (r.match.size() + r.rest.size() > in.size() || in.substr(in.size() - r.rest.size()) != r.rest) std::abort();
    const std::string again = r.encode();
    DedupeRecord back;
    if (!DedupeRecord::decode(again, back) || !same(back, r)) std::abort();
    if ((in[2] != '0' || in[3] == '|') && again != in) std::abort();
  }

  if (size < 1) return 0;
  DedupeRecord made;
  made.kind = "rde"[data[0] % 3];
  const std::string_view body = in.substr(1);
  const auto nul = body.find('\0');
  made.match = std::string(body.substr(0, nul));
  made.rest = nul == std::string_view::npos ? "" : std::string(body.substr(nul + 1));
  DedupeRecord back;
  if (!DedupeRecord::decode(made.encode(), back) || !same(back, made)) std::abort();
  // encode_to appends
  std::string appended = "x";
  DedupeRecord::encode_to(appended, made.kind, made.match, made.rest);
  if (appended != "x" + made.encode()) std::abort();
  return 0;
}
