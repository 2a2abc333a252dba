// weave/abi.h — how Weave's names reach a program: the library version, the
// versioned namespace every name is declared in, and symbol visibility.
//
// Code always says weave::X. The names live in an inline namespace named after
// the ABI version (weave::v0::X), so a program that mixes objects built against
// two incompatible Weave versions fails to link instead of misbehaving.
//
//   namespace WEAVE_NAMESPACE {                // opens weave::inline v0
//   class WEAVE_API LockClient { ... };         // exported from a shared library
//   }
//
// Libraries are built with -fvisibility=hidden: only names marked WEAVE_API,
// all declared in include/weave/, leave the shared libweave.so. Internal
// headers (src/) never mark a name: the components' internal calls stay
// inside libweave.so.
#pragma once

#define WEAVE_VERSION_MAJOR 0
#define WEAVE_VERSION_MINOR 1
#define WEAVE_VERSION_PATCH 0

// Bumped when a release breaks the ABI; the inline namespace follows it.
#define WEAVE_ABI_VERSION 0
#define WEAVE_NAMESPACE weave::inline v0

#if defined(_WIN32)
#  define WEAVE_API
#else
#  define WEAVE_API __attribute__((visibility("default")))
#endif
