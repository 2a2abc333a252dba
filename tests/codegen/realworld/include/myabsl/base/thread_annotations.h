// myabsl/base/thread_annotations.h — Clang thread-safety analysis
// attributes (-Wthread-safety); they expand to nothing for other compilers.
#ifndef MYABSL_BASE_THREAD_ANNOTATIONS_H_
#define MYABSL_BASE_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define MYABSL_THREAD_ANNOTATION_ATTRIBUTE__(x) __attribute__((x))
#else
#define MYABSL_THREAD_ANNOTATION_ATTRIBUTE__(x)  // no-op
#endif

#define CAPABILITY(x) MYABSL_THREAD_ANNOTATION_ATTRIBUTE__(capability(x))
#define SCOPED_CAPABILITY MYABSL_THREAD_ANNOTATION_ATTRIBUTE__(scoped_lockable)
#define GUARDED_BY(x) MYABSL_THREAD_ANNOTATION_ATTRIBUTE__(guarded_by(x))
#define LOCKS_EXCLUDED(...) MYABSL_THREAD_ANNOTATION_ATTRIBUTE__(locks_excluded(__VA_ARGS__))
#define EXCLUSIVE_LOCKS_REQUIRED(...) \
  MYABSL_THREAD_ANNOTATION_ATTRIBUTE__(exclusive_locks_required(__VA_ARGS__))
#define SHARED_LOCKS_REQUIRED(...) \
  MYABSL_THREAD_ANNOTATION_ATTRIBUTE__(shared_locks_required(__VA_ARGS__))
#define EXCLUSIVE_LOCK_FUNCTION(...) \
  MYABSL_THREAD_ANNOTATION_ATTRIBUTE__(exclusive_lock_function(__VA_ARGS__))
#define UNLOCK_FUNCTION(...) MYABSL_THREAD_ANNOTATION_ATTRIBUTE__(unlock_function(__VA_ARGS__))

#endif  // MYABSL_BASE_THREAD_ANNOTATIONS_H_
