// The process-wide states of one kind (bulkheads, circuit breakers) by name:
// made on first use, shared by every user of the name, who must ask for the
// same, and walked by their metrics.
//
//   auto s = named_state<BulkheadState>(name, [&] { return make_state(name, max); },
//                                       [&](const BulkheadState& had) { return had.max() == max ? "" : "..."; });
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/process.h"
#include "weave/error.h"

namespace WEAVE_NAMESPACE::detail {

template <class State>
struct NamedStates {
  Mutex mutex;
  std::map<std::string, std::shared_ptr<State>, std::less<>> by_name WEAVE_GUARDED_BY(mutex);
};

// The state called `name`, made by `make()` on first use. `differs(had)`
// says why the one there is not what this caller asks for (the text of the
// UsageError thrown), or "" when it is.
template <class State, class Make, class Differs>
std::shared_ptr<State> named_state(std::string_view name, Make&& make, Differs&& differs) {
  NamedStates<State>& all = fork_guarded<NamedStates<State>>();
  Guard g(all.mutex);
  if (auto it = all.by_name.find(name); it != all.by_name.end()) {
    if (const std::string why = differs(static_cast<const State&>(*it->second)); !why.empty()) throw UsageError(why);
    return it->second;
  }
  std::shared_ptr<State> made = make();
  all.by_name.emplace(std::string(name), made);
  return made;
}

// f(name, state) for each named state, under the registry's lock.
template <class State, class F>
void for_each_named_state(F&& f) {
  NamedStates<State>& all = fork_guarded<NamedStates<State>>();
  Guard g(all.mutex);
  for (const auto& [name, state] : all.by_name) f(name, static_cast<const State&>(*state));
}

}  // namespace weave::detail
