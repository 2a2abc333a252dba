// weave/generated/stored_call.h — a woven call kept as JSON and run later,
// perhaps in another process ([[delay]]: annotations whose vocabulary says
// "stores_call"). Generated code's ABI; the delay interceptor and its worker
// are its only other users.
//
// weavegen emits, per method with such an annotation, a StoredCallCodec that
// MethodInfo::stored_call points at, and on the woven class (Woven<T>, or an
// interface's decorator) a table of those methods. The caller's side stores
// `codec->encode(inv.args())` with the method's name and signature hash; a
// worker serving the woven object runs it later below the annotation that
// stored it:
//
//   // caller's side, in the interceptor ([[delay]]'s around()):
//   if (inv.replaying_stored_call()) return inv.proceed();    // never reached by run_stored_call, see below
//   const weave::StoredCallCodec& codec = *inv.stored_call();
//   queue.push({std::string(inv.method()), codec.signature_hash, codec.encode(inv.args())});
//
//   // worker's side: serve(woven) registers the object's stored-call methods,
//   weave::StoredCalls calls = weave::stored_calls_of(woven);   // woven: a weave::Woven<Orders>&
//   for (const weave::MethodInfo* m : calls.methods) {
//     const weave::AnnotationSpec& a = m->annotations[m->stored_call->annotation];
//     by_name[m->qualified_name] = {m, calls.owner, weave::Annotation(a, {}).text("queue")};
//   }
//   // ... and runs what it takes from the queue (a StoredCallRejected: dead-letter it):
//   weave::detail::run_stored_call(*m, owner, stored.signature_hash, stored.json);
#pragma once

#include "weave/abi.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "weave/generated/method_info.h"
#include "weave/invocation.h"

namespace WEAVE_NAMESPACE {

// FNV-1a, 64 bits, over the bytes of `signature`: the same value on every
// compiler and platform, so a call stored by one build is recognised by
// another whose method has the same signature.
constexpr std::uint64_t signature_hash(std::string_view signature) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : signature) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// How a stored call of one method is written and read back.
struct WEAVE_API StoredCallCodec {
  // "void shop::Orders::cancel_if_unpaid(const std::basic_string<char>&)": the
  // qualified name and the parameter types after aliases, as weavegen spells them.
  std::string_view signature;
  std::uint64_t signature_hash;  // signature_hash(signature)
  // Index in MethodInfo::annotations (sorted by order) of the annotation that
  // stores the call: a replay runs the interceptors after it, then the method.
  std::size_t annotation;
  // The call's arguments -> a JSON array, one element per parameter. Throws
  // what to_json throws; UsageError when `args` are not this method's.
  std::string (*encode)(std::span<const ArgRef> args);
  // A JSON array from encode -> the call re-made on `owner` (the woven object,
  // StoredCalls::owner) from decoded copies of its arguments, its key
  // templates rendered from them. Throws when the text does not fit the
  // parameter types (run_stored_call makes that a StoredCallRejected).
  std::unique_ptr<detail::DetachedCall> (*decode)(void* owner, std::string_view json);
};

// A woven object's methods whose calls are stored, and the object as the
// owner their decode() and run_stored_call() take.
struct StoredCalls {
  std::span<const MethodInfo* const> methods;  // each with a non-null stored_call
  void* owner = nullptr;
};

// For a Woven<T> (or Decorated<I>) whose class has such methods; a class
// without them has no weave_stored_methods(), and this does not compile.
// `woven` must outlive every run_stored_call on it; a Woven<T>'s destructor
// waits for the ones running.
template <class W>
  requires requires { W::weave_proxy::weave_stored_methods(); }
StoredCalls stored_calls_of(W& woven) noexcept {
  using Proxy = typename W::weave_proxy;
  return {Proxy::weave_stored_methods(), static_cast<void*>(static_cast<Proxy*>(&woven))};
}

namespace detail {

// Runs a stored call of `method` on `owner` as a call made now: decodes
// `json`, then runs the interceptors after the one that stored it, then the
// method; Invocation::replaying_stored_call() is true for them. Returns false
// when one of them skipped the method (on_busy=skip). Throws
// StoredCallRejected, before anything runs, when `signature_hash` is not this
// build's (the method's parameters changed since the call was stored) or the
// arguments do not decode; UsageError when `method` stores no calls or the
// owner is being destroyed; otherwise what the interceptors or the method throw.
WEAVE_API bool run_stored_call(const MethodInfo& method, void* owner, std::uint64_t signature_hash,
                               std::string_view json);

}  // namespace detail
}  // namespace WEAVE_NAMESPACE
