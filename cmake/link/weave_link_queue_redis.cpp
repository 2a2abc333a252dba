// Compiled into every target that links Weave::queue_redis (INTERFACE_SOURCES):
// it refers to the object that registers the Redis schemes for queues.
extern "C" const char weave_link_queue_redis;
[[gnu::used]] static const char* const weave_keep_queue_redis = &weave_link_queue_redis;
