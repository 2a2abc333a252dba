// Compiled into every target that links Weave::cache_redis (INTERFACE_SOURCES):
// it refers to the object that registers the Redis schemes for [[cache]].
extern "C" const char weave_link_cache_redis;
[[gnu::used]] static const char* const weave_keep_cache_redis = &weave_link_cache_redis;
