#pragma once
#include <string>

#include "greeting.h"

class Greeter {
 public:
  virtual ~Greeter() = default;
  [[weave::lock(key="greet:<name>", ttl=5s)]]
  virtual std::string greet(const std::string& name);
  Greeting style = Greeting::plain;
};
