#include "weave/annotation.h"

#include <initializer_list>

#include "weave/error.h"

namespace WEAVE_NAMESPACE {
namespace {
const char* kind_name(ArgValue::Kind k) {
  switch (k) {
    case ArgValue::Kind::text: return "text";
    case ArgValue::Kind::enumerator: return "enum";
    case ArgValue::Kind::duration: return "duration";
    case ArgValue::Kind::integer: return "integer";
    case ArgValue::Kind::boolean: return "bool";
    case ArgValue::Kind::key_template: return "template";
    case ArgValue::Kind::key_template_list: return "template list";
    case ArgValue::Kind::rate: return "rate";
    case ArgValue::Kind::exception_types: return "exception types";
  }
  return "?";
}
}  // namespace

const ArgValue* Annotation::find(std::string_view arg) const noexcept {
  for (const ArgSpec& a : spec_->args)
    if (a.name == arg) return &a.value;
  return nullptr;
}

const ArgValue& Annotation::require(std::string_view arg,
                                    std::initializer_list<ArgValue::Kind> kinds) const {
  const ArgValue* v = find(arg);
  if (!v)
    throw UsageError("annotation '" + std::string(name()) + "' has no argument '" +
                     std::string(arg) + "'");
  for (ArgValue::Kind k : kinds)
    if (v->kind == k) return *v;
  throw UsageError("argument '" + std::string(arg) + "' of annotation '" + std::string(name()) +
                   "' is a " + kind_name(v->kind) + ", not a " + kind_name(*kinds.begin()));
}

std::string_view Annotation::text(std::string_view arg) const {
  const ArgValue& v = require(arg, {ArgValue::Kind::text, ArgValue::Kind::enumerator,
                                    ArgValue::Kind::key_template});
  if (v.kind == ArgValue::Kind::key_template) return rendered(v.first);
  return v.text;
}

std::vector<std::string_view> Annotation::texts(std::string_view arg) const {
  const ArgValue& v = require(arg, {ArgValue::Kind::key_template_list, ArgValue::Kind::key_template,
                                    ArgValue::Kind::text});
  if (v.kind == ArgValue::Kind::text) return {v.text};
  std::vector<std::string_view> out;
  out.reserve(static_cast<std::size_t>(v.count));
  for (int i = 0; i < v.count; ++i) out.push_back(rendered(v.first + i));
  return out;
}

std::chrono::milliseconds Annotation::duration(std::string_view arg) const {
  return require(arg, {ArgValue::Kind::duration}).duration;
}

std::int64_t Annotation::integer(std::string_view arg) const {
  return require(arg, {ArgValue::Kind::integer}).integer;
}

bool Annotation::boolean(std::string_view arg) const {
  return require(arg, {ArgValue::Kind::boolean}).integer != 0;
}

ArgRate Annotation::rate(std::string_view arg) const {
  const ArgValue& v = require(arg, {ArgValue::Kind::rate});
  return {v.integer, v.duration};
}

ExceptionMatcher Annotation::exception_types(std::string_view arg) const {
  return require(arg, {ArgValue::Kind::exception_types}).matches;
}

std::string_view Annotation::rendered(int slot) const {
  if (slot < 0 || static_cast<std::size_t>(slot) >= rendered_.size())
    throw UsageError("annotation '" + std::string(name()) + "' has no rendered key template " + std::to_string(slot));
  return rendered_[static_cast<std::size_t>(slot)];
}

std::size_t Annotation::choice(std::string_view arg, std::span<const std::string_view> values,
                               std::string_view method) const {
  const std::int64_t index = enum_index(arg);
  if (index >= 0 && static_cast<std::size_t>(index) < values.size()) return static_cast<std::size_t>(index);
  const std::string_view value = text(arg);
  std::string list;
  std::size_t i = 0;
  for (std::string_view v : values) {
    if (v == value) return i;
    list += (i++ ? ", " : "") + std::string(v);
  }
  throw UsageError(std::string(name()) + " " + std::string(arg) + "='" + std::string(value) + "' is not one of " +
                   list + (method.empty() ? std::string() : " (" + std::string(name()) + " on " + std::string(method) + ")"));
}

std::int64_t Annotation::enum_index(std::string_view arg) const {
  return require(arg, {ArgValue::Kind::enumerator}).integer;
}

}  // namespace weave
