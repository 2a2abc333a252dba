#pragma once
#include <string>

namespace b {
class Model {
 public:
  virtual ~Model() = default;
  [[weave::lock(key="b:<id>")]]
  virtual std::string name(const std::string& id);
  int size() const { return 2; }
};
}  // namespace b
