// weave/generated/revision.h — the revision of generated code's ABI.
//
// weavegen writes the revision it was built with into every file it makes
// (WEAVE_CHECK_GENERATED_REVISION); the library checks it at compile time.
// A proxy made by another weavegen is a compile error naming both revisions
// and the fix, never a proxy that calls the runtime the wrong way. Bumped
// whenever what proxies call (weave/generated/*.h) or what they emit changes.
#pragma once

#include "weave/abi.h"

#define WEAVE_GENERATED_REVISION 7

namespace WEAVE_NAMESPACE::detail {

template <int MadeBy, int ThisLibrary>
struct generated_revision_check {
  static_assert(MadeBy == ThisLibrary,
                "weave: this .weave.h was made by a weavegen of another generated-code revision than this Weave "
                "library's (generated_revision_check<made by, this library>): regenerate it with this Weave's "
                "weavegen (weave_generate() does on the next build once the weavegen target or package is this "
                "Weave's), or build against the Weave it was made for");
  static constexpr bool ok = MadeBy == ThisLibrary;
};

}  // namespace weave::detail

// First line of every generated file's code.
#define WEAVE_CHECK_GENERATED_REVISION(made_by) \
  static_assert(::weave::detail::generated_revision_check<(made_by), WEAVE_GENERATED_REVISION>::ok)
