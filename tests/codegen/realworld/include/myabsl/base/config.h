// myabsl/base/config.h — the versioned inline namespace, in the manner of
// Abseil's options.h / config.h. Every public declaration sits between
// MYABSL_NAMESPACE_BEGIN and MYABSL_NAMESPACE_END inside `namespace myabsl`,
// so two releases can be linked into one program without clashing.
#ifndef MYABSL_BASE_CONFIG_H_
#define MYABSL_BASE_CONFIG_H_

#define MYABSL_OPTION_USE_INLINE_NAMESPACE 1
#define MYABSL_OPTION_INLINE_NAMESPACE_NAME lts_20240722

#if MYABSL_OPTION_USE_INLINE_NAMESPACE == 0
#define MYABSL_NAMESPACE_BEGIN
#define MYABSL_NAMESPACE_END
#else
#define MYABSL_NAMESPACE_BEGIN inline namespace MYABSL_OPTION_INLINE_NAMESPACE_NAME {
#define MYABSL_NAMESPACE_END }
#endif

#endif  // MYABSL_BASE_CONFIG_H_
