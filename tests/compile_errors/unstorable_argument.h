// Must not build: [[delay]] stores cancel()'s arguments as JSON, but Gadget
// has no nlohmann/json conversion. weavegen accepts the header (it cannot
// tell whether to_json / from_json exist); the generated source's
// encode_stored_args<shop::Gadget> must fail on weave/json_codec.h's
// static_assert, which says what to add (tests/compile_errors/CMakeLists.txt).
#pragma once

#include <string>

namespace shop {

struct Gadget {  // no to_json / from_json
  std::string id;
};

class Workshop {
 public:
  virtual ~Workshop() = default;
  [[delay]] virtual void repair(const Gadget& gadget, int attempt);
};

}  // namespace shop
