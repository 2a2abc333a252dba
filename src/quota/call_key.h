// The key a quota annotation's `key` argument gives each call, shared by
// [[rate_limit]] and [[semaphore]]: a key template rendered per call, or
// fixed text (weavegen's default, the qualified method name; none written
// by hand: the method's name).
#pragma once

#include <string_view>

#include "weave/annotation.h"
#include "weave/invocation.h"

namespace WEAVE_NAMESPACE::detail {

struct CallKey {
  int slot = -1;            // the template's rendered slot, or -1: `fixed`
  std::string_view fixed;
  std::string_view label;   // the template as written, or the fixed key: its metrics' label

  // Throws UsageError when `key` is neither text nor a template.
  static CallKey of(const Annotation& a) {
    CallKey k;
    if (const ArgValue* key = a.find("key")) {
      if (key->kind == ArgValue::Kind::key_template) k.slot = key->first;
      else k.fixed = a.text("key");
      k.label = k.slot >= 0 ? std::string_view(key->text) : k.fixed;
    }
    return k;
  }
  std::string_view operator()(const Invocation& inv) const {
    if (slot >= 0) return inv.annotation().rendered(slot);
    return fixed.empty() ? inv.method() : fixed;
  }
};

}  // namespace weave::detail
