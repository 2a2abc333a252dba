#pragma once
#include <string>

namespace a {
class Model {
 public:
  virtual ~Model() = default;
  [[lock(key="a:<id>")]]
  virtual std::string name(const std::string& id);
};
}  // namespace a
