// weave/redis_acl.h — the least a Redis ACL user needs to run Weave.
//
// Every feature on redis://, redis+cluster://, redis+sentinel:// and
// redlock:// runs with a user that has exactly this rule:
//
//   ACL SETUSER weave on >secret resetkeys resetchannels <weave::redis_acl_rule()>
//   WEAVE_URL=redis://weave:secret@127.0.0.1:6379
//
// Its key and channel patterns cover the default key prefixes (all start
// with "weave:", and every key and channel of Weave starts with a hash tag,
// "{weave:..."); pass your prefixes when you changed key_prefix. A command
// the user may not run is a ReplyError (NOPERM) that names it and says what
// to add. docs/redis.md, "ACL", lists the commands and why each is needed.
#pragma once

#include "weave/abi.h"

#include <initializer_list>
#include <string>
#include <string_view>

namespace WEAVE_NAMESPACE {

// "~{weave:* &{weave:* -@all +ping +select ..." for the given key prefixes
// (each gives a key pattern "~{<prefix>*" and a channel pattern "&{<prefix>*").
WEAVE_API std::string redis_acl_rule(std::initializer_list<std::string_view> key_prefixes = {"weave:"});

}  // namespace weave
