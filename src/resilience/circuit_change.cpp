// A shared circuit breaker's change as its store publishes it
// (circuit_store.h: encode_circuit_change), read back.
#include <charconv>

#include "resilience/circuit_store.h"

namespace WEAVE_NAMESPACE::detail {

std::optional<CircuitChange> decode_circuit_change(std::string_view payload) {
  long long field[3];
  const char* at = payload.data();
  const char* end = payload.data() + payload.size();
  for (long long& f : field) {
    const auto [next, ec] = std::from_chars(at, end, f);
    if (ec != std::errc() || next == end || *next != ' ') return std::nullopt;
    at = next + 1;
  }
  if (field[0] < 0 || field[0] > 2 || field[1] < 1 || field[2] < 0) return std::nullopt;
  CircuitChange c;
  c.name.assign(at, end);
  c.view.state = static_cast<CircuitState>(field[0]);
  c.view.generation = static_cast<std::uint64_t>(field[1]);
  c.view.retry_after_ms = field[2];
  c.view.changed = true;
  return c;
}

}  // namespace weave::detail
