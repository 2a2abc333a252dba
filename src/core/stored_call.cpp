// A stored call ([[delay]]) run by a worker: the call re-made from its JSON
// as a Detached standing after the annotation that stored it, so the rest of
// the chain runs as if the method were called now (weave/generated/stored_call.h).
#include <cstdio>
#include <exception>

#include "chain.h"
#include "weave/generated.h"

namespace WEAVE_NAMESPACE::detail {

namespace {
std::string hex(std::uint64_t h) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(h));
  return buf;
}
}  // namespace

bool run_stored_call(const MethodInfo& method, void* owner, std::uint64_t signature_hash, std::string_view json) {
  const std::string name(method.qualified_name);
  const StoredCallCodec* codec = method.stored_call;
  if (!codec) throw UsageError(name + " stores no calls: none of its annotations does (no StoredCallCodec)");
  if (!owner) throw UsageError("a stored call of " + name + " was run on no object");
  if (signature_hash != codec->signature_hash)
    throw StoredCallRejected(name, "it was stored with signature hash " + hex(signature_hash) + ", this build's is " +
                                       hex(codec->signature_hash) + " ('" + std::string(codec->signature) +
                                       "'): the method's parameters changed since, so its arguments would be misread");
  std::unique_ptr<DetachedCall> call;
  try {
    call = codec->decode(owner, json);
  } catch (const std::exception& e) {
    throw StoredCallRejected(name, std::string("its arguments do not decode as '") + std::string(codec->signature) +
                                       "': " + e.what());
  }
  Detached d = InvocationAccess::adopt(method, &resolve_chain(method), codec->annotation + 1, std::move(call), true);
  if (!d) throw UsageError("a stored call of " + name + " was run on an object being destroyed");
  bool ran = false;
  d.run([&](Invocation& inv) {
    inv.proceed();
    ran = inv.proceeded();
  });
  return ran;
}

}  // namespace WEAVE_NAMESPACE::detail
