// Compiled into every target that links Weave::dedupe_redis (INTERFACE_SOURCES):
// it refers to the object that registers the Redis schemes for [[dedupe]].
extern "C" const char weave_link_dedupe_redis;
[[gnu::used]] static const char* const weave_keep_dedupe_redis = &weave_link_dedupe_redis;
