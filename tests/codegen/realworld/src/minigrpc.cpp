// minigrpc/minigrpc.h's one out-of-line definition.
#include "minigrpc/minigrpc.h"

namespace minigrpc {

namespace {
const Status kOk;
}  // namespace

const Status& Status::OK = kOk;

}  // namespace minigrpc
