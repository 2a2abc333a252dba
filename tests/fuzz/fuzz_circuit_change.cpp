// A shared circuit breaker's change as published on its store's channel
// (src/resilience/circuit_change.cpp). Oracle: decode_circuit_change on any
// text never crashes and gives a state, a generation >= 1 and a wait >= 0,
// or nothing; and what encode_circuit_change writes (a state, generation and
// wait taken from the input's first bytes, the rest as the breaker's name,
// spaces and all) decodes back to exactly the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "resilience/circuit_store.h"

namespace d = weave::detail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  if (const auto c = d::decode_circuit_change(in)) {
    if (static_cast<int>(c->view.state) > 2 || c->view.generation < 1 || c->view.retry_after_ms < 0) std::abort();
  }
  if (size < 17) return 0;
  std::uint64_t generation = 0, wait = 0;
  std::memcpy(&generation, data + 1, 8);
  std::memcpy(&wait, data + 9, 8);
  d::SharedCircuitView v;
  v.state = static_cast<weave::CircuitState>(data[0] % 3);
  v.generation = 1 + generation % (std::uint64_t{1} << 62);
  v.retry_after_ms = static_cast<std::int64_t>(wait % (std::uint64_t{1} << 62));
  const std::string name(in.substr(17));
  const auto back = d::decode_circuit_change(d::encode_circuit_change(name, v));
  if (!back || back->name != name || back->view.state != v.state || back->view.generation != v.generation ||
      back->view.retry_after_ms != v.retry_after_ms || !back->view.changed)
    std::abort();
  return 0;
}
