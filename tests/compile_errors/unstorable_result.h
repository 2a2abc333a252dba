// Must not build: [[cache]] keeps find()'s result as JSON, but Gadget has no
// nlohmann/json conversion. weavegen accepts the header (it does not judge
// types); the generated source's make_result_codec<shop::Gadget> must fail,
// and should fail on weave/json_codec.h's static_assert, which says what to
// add (tests/compile_errors/CMakeLists.txt checks both; the second is disabled
// until that static_assert can fire).
#pragma once

#include <string>

namespace shop {

struct Gadget {  // no to_json / from_json
  std::string id;
};

class Workshop {
 public:
  virtual ~Workshop() = default;
  [[cache(key="<id>")]] virtual Gadget find(const std::string& id);
};

}  // namespace shop
