#include "weave/invocation.h"

#include "chain.h"
#include "weave/generated.h"
#include "weave/result_codec.h"

namespace WEAVE_NAMESPACE {

std::string ArgRef::text() const {
  if (!append_)
    throw UsageError(std::string("argument of type ") + type_->name() +
                     " has no key formatting (add weave_key or operator<<)");
  std::string out;
  append_(out, ptr_);
  return out;
}

namespace {
const detail::Chain no_interceptors;  // constant-initialised: no guard per call

// The errors of proceed(), out of line: its per-call path stays small.
[[noreturn, gnu::cold, gnu::noinline]] void throw_proceeded_twice(const MethodInfo& m) {
  throw UsageError("proceed() called again after " + std::string(m.qualified_name) + " returned");
}
[[noreturn, gnu::cold, gnu::noinline]] void throw_no_target(const MethodInfo& m) {
  throw UsageError("Invocation of " + std::string(m.qualified_name) + " has no target to proceed to");
}
}  // namespace

Invocation::Invocation(const MethodInfo& method, std::span<const ArgRef> args, std::span<const std::string> rendered,
                       void (*target)(void*), void* target_ctx, void* result_slot) noexcept
    : method_(&method),
      args_(args),
      rendered_(rendered),
      target_(target),
      target_ctx_(target_ctx),
      result_slot_(result_slot) {
  chain_ = &no_interceptors;
}

const AnnotationSpec& Invocation::empty_spec() noexcept {
  static constexpr AnnotationSpec empty{};
  return empty;
}

bool Invocation::can_detach() const noexcept { return detach_ != nullptr && detach_->make != nullptr; }

const void* Invocation::prepared_untyped() const noexcept {
  if (depth_ == 0) return nullptr;
  const auto& chain = *static_cast<const detail::Chain*>(chain_);
  return depth_ <= chain.prepared.size() ? chain.prepared[depth_ - 1].get() : nullptr;
}

std::string_view Invocation::method() const noexcept { return method_->qualified_name; }
std::string_view Invocation::file() const noexcept { return method_->file; }
int Invocation::line() const noexcept { return method_->line; }

const ArgRef& Invocation::arg(std::size_t i) const {
  if (i >= args_.size())
    throw UsageError("argument " + std::to_string(i) + " out of range: " +
                     std::string(method()) + " has " + std::to_string(args_.size()));
  return args_[i];
}

std::string_view Invocation::arg_name(std::size_t i) const {
  arg(i);  // range check
  return i < method_->param_names.size() ? method_->param_names[i] : std::string_view{};
}

const Annotation& Invocation::annotation() const {
  if (depth_ == 0)
    throw UsageError("Invocation::annotation() called outside an interceptor of " +
                     std::string(method()));
  return current_;
}

void Invocation::proceed() {
  if (target_done_) [[unlikely]]
    throw_proceeded_twice(*method_);
  const auto& chain = *static_cast<const detail::Chain*>(chain_);
  if (depth_ == chain.interceptors.size()) {
    if (!target_) [[unlikely]]
      throw_no_target(*method_);
    target_(target_ctx_);
    target_done_ = true;
    return;
  }
  // Run the next interceptor; restore this level's view afterwards, also on
  // throw. The view is made again from the depth rather than copied (reading
  // back the annotation just stored would stall on store forwarding).
  struct Restore {
    Invocation& inv;
    std::size_t depth;
    ~Restore() { inv.at_level(depth); }
  } restore{*this, depth_};
  Interceptor* next = chain.interceptors[depth_];
  current_ = Annotation(method_->annotations[depth_], rendered_);
  ++depth_;
  next->around(*this);
}

void Invocation::at_level(std::size_t depth) noexcept {
  depth_ = depth;
  current_ = depth == 0 ? Annotation(empty_spec(), {}) : Annotation(method_->annotations[depth - 1], rendered_);
}

const StoredCallCodec* Invocation::stored_call() const noexcept { return method_->stored_call; }

const ResultCodec* Invocation::result_codec() const noexcept { return result_slot_ ? method_->result : nullptr; }

const void* Invocation::result() const noexcept {
  const ResultCodec* codec = result_codec();
  return codec && target_done_ ? codec->peek(result_slot_) : nullptr;
}

const ResultCodec& Invocation::codec_for_completion() const {
  const ResultCodec* codec = result_codec();
  if (!codec)
    throw UsageError("an interceptor completed " + std::string(method()) +
                     " with a result, but its result is not stored (no annotation of it stores results)");
  if (target_done_) throw UsageError("an interceptor completed " + std::string(method()) + " twice");
  return *codec;
}

void Invocation::complete_from_json(std::string_view json) {
  codec_for_completion().decode(json, result_slot_);
  target_done_ = true;
}

void Invocation::complete_from_shared(const void* value) {
  codec_for_completion().assign(result_slot_, value);
  target_done_ = true;
}

namespace detail {

bool run_chain(const MethodInfo& info, std::span<const ArgRef> args,
               std::span<const std::string> rendered, void (*target)(void*), void* ctx, void* result_slot,
               const DetachSource* detach) {
  Invocation inv(info, args, rendered, target, ctx, result_slot);
  InvocationAccess::set_up(inv, resolve_chain(info), detach);
  inv.proceed();
  return inv.proceeded();
}

void throw_cannot_skip(const MethodInfo& info) {
  throw UsageError("an interceptor skipped " + std::string(info.qualified_name) +
                   ", which cannot skip: it returns a value and names no fallback "
                   "(return void or std::optional, or add fallback=...)");
}

}  // namespace detail
}  // namespace weave
