// What the built-in `lock` interceptor reads from [[lock(...)]], once per
// method, and the keys of a call: shared by the blocking interceptor
// (lock_interceptor.cpp) and the one of asynchronous methods (src/lock/asio/).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "internal.h"
#include "weave/annotation.h"

namespace WEAVE_NAMESPACE::detail {

enum class OnBusy { fail, skip, fallback };

// What [[lock(...)]] says besides its keys.
struct LockSettings {
  LockSpec spec;
  OnBusy on_busy = OnBusy::fail;
};

// What a method's [[lock(...)]] says, read once when its chain is built
// (the interceptor's prepare()).
struct ParsedLock {
  LockSettings settings;
  // The keys: key templates rendered per call into slots [first, first +
  // count), or one key written as text (weavegen's default key, the method's
  // qualified name, or a spec written by hand) when first < 0.
  int first = -1, count = 1;
  std::string fixed;
  LockSeries* series = nullptr;  // the metrics of the key template (or of the fixed key)
  bool spec_checked = false;     // settings.spec passes spec_is_valid(): per call, only the keys are checked

  // Throws UsageError for a value outside the vocabulary (annotations/lock.json
  // gives the defaults of arguments not written).
  static std::shared_ptr<const ParsedLock> parse(const AnnotationSpec& spec);

  // The call's keys: one (in `one`, no allocation) or several (in `many`).
  std::span<const std::string_view> keys(const Annotation& a, std::string_view& one,
                                         std::vector<std::string_view>& many) const {
    if (count == 1) {
      one = first < 0 ? std::string_view(fixed) : a.rendered(first);
      return {&one, 1};
    }
    many.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) many.push_back(a.rendered(first + i));
    return many;
  }
};

}  // namespace weave::detail
