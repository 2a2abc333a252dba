// Where every Event goes (weave/event.h): the feature's own hook when its
// options name one, else the process's handler (by default a line on
// stderr). Features, the store and the renewer call emit_event(); none calls
// a hook itself.
#pragma once

#include <string_view>

#include "weave/abi.h"
#include "weave/event.h"

namespace WEAVE_NAMESPACE::detail {

// Hands `event` to `own` when set, else to the process handler. Never
// throws: a hook's exception is dropped (there is nobody to hand it to).
void emit_event(const EventHook& own, const Event& event) noexcept;

// An Event of `kind` with an Error (naming `key`) saying `what`, for what
// is not an error thrown anywhere (a reconnect, a failed renewal), to `own`
// when set, else to the process handler.
void emit_notice(const EventHook& own, EventKind kind, std::string_view feature, std::string_view key,
                           std::string_view what) noexcept;
// The process handler alone: events of the store, which no feature's options govern.
inline void emit_notice(EventKind kind, std::string_view feature, std::string_view key, std::string_view what) noexcept {
  emit_notice(EventHook{}, kind, feature, key, what);
}

}  // namespace weave::detail
