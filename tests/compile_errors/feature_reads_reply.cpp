// A feature reading hiredis' reply fields: outside src/store/*.cpp
// redisReply is incomplete, so this must not compile (read replies through
// store::ReplyView).
#include "store/executor.h"
#include "store/reply.h"

long long answer(weave::store::Executor& exec, const weave::store::ScriptCall& call) {
  const weave::store::Reply reply = weave::store::run_one(exec, call, "answer");
  return reply->integer;
}
