// Which lock guards which state, for Clang's thread-safety analysis
// (-Wthread-safety): a field read or written without its lock, or a
// function called without the lock it requires, is a compile error in the
// build that checks it (the CTest lint.thread_safety, clang++-14). The
// macros are empty for other compilers.
//
//   class Cell {
//     SpinLock lock;
//     int state WEAVE_GUARDED_BY(lock) = 0;
//     void bump() { Guard g(lock); ++state; }
//     void bump_locked() WEAVE_REQUIRES(lock) { ++state; }
//   };
//
// The locks (core/process.h): SpinLock, Mutex (with the condition-variable
// waits), SharedMutex; Guard takes one, SharedGuard a SharedMutex's read
// side. A lambda that runs under a lock says so: [&]() WEAVE_REQUIRES(m) {...}.
// State another object's lock guards (a Slot under its shard's) cannot be
// named here: its comment says which lock.
#pragma once

#if defined(__clang__)
#define WEAVE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define WEAVE_THREAD_ANNOTATION(x)
#endif

#define WEAVE_CAPABILITY(name) WEAVE_THREAD_ANNOTATION(capability(name))
#define WEAVE_SCOPED_CAPABILITY WEAVE_THREAD_ANNOTATION(scoped_lockable)
#define WEAVE_GUARDED_BY(lock) WEAVE_THREAD_ANNOTATION(guarded_by(lock))
#define WEAVE_REQUIRES(...) WEAVE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define WEAVE_ACQUIRE(...) WEAVE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define WEAVE_RELEASE(...) WEAVE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// WEAVE_TRY_ACQUIRE(true): a try_lock() that holds the lock when it returns true.
#define WEAVE_TRY_ACQUIRE(...) WEAVE_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// Held by readers alongside each other (SharedMutex, process.h).
#define WEAVE_ACQUIRE_SHARED(...) WEAVE_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define WEAVE_RELEASE_SHARED(...) WEAVE_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
// A scoped guard's release of what it holds, shared or not.
#define WEAVE_RELEASE_GENERIC(...) WEAVE_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
// For what the analysis cannot follow, said in a comment: what runs before
// any other thread can see the object, or in a fork()ed child's one thread,
// or a lock held from one function into another (the fork handlers).
#define WEAVE_NO_THREAD_SAFETY_ANALYSIS WEAVE_THREAD_ANNOTATION(no_thread_safety_analysis)
