// An allocator for objects made and freed once per guarded call (every
// feature's lease: a lock's, a dedupe claim, a queue delivery, a cache fill
// lease): each thread keeps a few freed blocks of each size
// and hands them out again, so the call costs no trip through malloc.
//
//   auto lease = std::allocate_shared<LeaseState>(Recycled<LeaseState>{}, fill);
//
// A block freed on another thread joins that thread's blocks. At most
// kKeptBlocks per size and thread are kept; the rest go back to the heap, as
// do a thread's blocks when it exits. Under AddressSanitizer and
// ThreadSanitizer every block goes back to the heap at once, so a use after
// free is still reported.
#pragma once

#include <cstddef>
#include <new>

#include "weave/abi.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#  define WEAVE_RECYCLE_BLOCKS 0
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#    define WEAVE_RECYCLE_BLOCKS 0
#  endif
#endif
#ifndef WEAVE_RECYCLE_BLOCKS
#  define WEAVE_RECYCLE_BLOCKS 1
#endif

namespace WEAVE_NAMESPACE::detail {

// This thread's freed blocks of `Size` bytes (aligned to `Align`).
template <std::size_t Size, std::size_t Align>
class BlockCache {
 public:
  static constexpr unsigned kKeptBlocks = 8;

  static void* take() {
    List& l = list;
    if (l.head) {
      Block* b = l.head;
      l.head = b->next;
      --l.count;
      return b;
    }
    return ::operator new(Size, std::align_val_t(Align));
  }
  static void give(void* p) noexcept {
    List& l = list;
    if (!WEAVE_RECYCLE_BLOCKS || l.closed || l.count == kKeptBlocks)
      return ::operator delete(p, std::align_val_t(Align));
    if (l.count == 0 && !l.registered) register_exit();
    l.head = new (p) Block{l.head};
    ++l.count;
  }

 private:
  struct Block {
    Block* next;
  };
  static_assert(Size >= sizeof(Block));
  // Trivially destructible: usable while the thread's other thread_locals
  // are destroyed (a lease freed by one of their destructors).
  struct List {
    Block* head = nullptr;
    unsigned count = 0;
    bool registered = false;
    bool closed = false;  // the thread is exiting: blocks go back to the heap
  };
  static constinit inline thread_local List list{};

  // Frees the thread's blocks when it exits (a thread_local with a
  // destructor, made by the thread's first recycled block).
  static void register_exit() noexcept {
    struct Exit {
      ~Exit() {
        List& l = list;
        l.closed = true;
        while (l.head) {
          Block* b = l.head;
          l.head = b->next;
          ::operator delete(b, std::align_val_t(Align));
        }
        l.count = 0;
      }
    };
    thread_local Exit exit;
    (void)exit;
    list.registered = true;
  }
};

template <class T>
struct Recycled {
  using value_type = T;
  Recycled() noexcept = default;
  template <class U>
  Recycled(const Recycled<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n != 1) return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T))));
    return static_cast<T*>(BlockCache<sizeof(T), alignof(T)>::take());
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n != 1) return ::operator delete(p, std::align_val_t(alignof(T)));
    BlockCache<sizeof(T), alignof(T)>::give(p);
  }
  template <class U>
  bool operator==(const Recycled<U>&) const noexcept {
    return true;
  }
};

}  // namespace weave::detail
