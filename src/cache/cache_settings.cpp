#include "cache/cache_settings.h"

#include <exception>
#include <initializer_list>

namespace WEAVE_NAMESPACE::detail::cache {

Settings read_settings(const Annotation& a) {
  Settings s;
  if (const ArgValue* name = a.find("name"); name && name->kind == ArgValue::Kind::key_template)
  {
    s.name_slot = name->first;  // a name that depends on the call (per tenant, say)
    s.name = std::string(name->text);  // as written: the label of its metrics
  }
  else if (name)
    s.name = a.text("name");
  if (const ArgValue* key = a.find("key"); key && key->kind == ArgValue::Kind::key_template)
    s.key_slot = key->first;
  else if (key)
    s.key = std::string(a.text("key"));
  if (a.has("ttl")) s.ttl = a.duration("ttl");
  if (a.has("local_ttl")) s.local_ttl = a.duration("local_ttl");
  if (a.has("null_ttl")) s.null_ttl = a.duration("null_ttl");
  if (s.local_ttl > s.ttl) s.local_ttl = s.ttl;
  if (a.has("tier")) s.tier = static_cast<Tier>(a.choice("tier", vocab::tier_values));
  if (a.has("on_error")) s.throw_errors = a.choice("on_error", vocab::on_error_values) == 1;
  if (a.has("all")) s.all = a.boolean("all");
  if (a.has("sync")) s.sync = a.boolean("sync");
  if (a.has("refresh_after")) s.refresh_after = a.duration("refresh_after");
  if (a.has("before")) s.before = a.boolean("before");
  return s;
}

bool complete_with(Invocation& inv, const ResultCodec& mine, const ResultCodec& made_by, const void* value) {
  if (mine.same_type(made_by)) {
    inv.complete_from_shared(value);
    return true;
  }
  try {
    inv.complete_from_json(made_by.encode(value));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace weave::detail::cache
