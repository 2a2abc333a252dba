// weave/generated.h — the runtime surface weavegen's output calls, in one
// include. Not for hand-written code (interceptor authors use
// weave/interceptor.h and weave/invocation.h); the layout follows
// WEAVE_GENERATED_REVISION, which every generated file checks.
//
//   weave/generated/revision.h     the revision and its compile-time check
//   weave/generated/method_info.h  MethodInfo: one constant per woven method
//   weave/generated/chain.h        run_chain, detached calls, retire_detached
//   weave/generated/invoke.h       detail::invoke<R>(...): the body of a woven method
//   weave/generated/stored_call.h  StoredCallCodec, run_stored_call: calls kept to run later
#pragma once

#include "weave/abi.h"

#include "weave/annotation.h"
#include "weave/decorator.h"
#include "weave/generated/chain.h"
#include "weave/generated/invoke.h"
#include "weave/generated/method_info.h"
#include "weave/generated/revision.h"
#include "weave/generated/stored_call.h"
#include "weave/interceptor.h"
#include "weave/invocation.h"
#include "weave/key.h"
#include "weave/woven.h"
