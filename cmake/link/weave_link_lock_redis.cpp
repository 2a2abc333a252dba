// Compiled into every target that links Weave::lock_redis (INTERFACE_SOURCES): it
// refers to the object that registers what Weave::lock_redis brings, so a static
// link keeps that object and a shared link keeps the library (with
// --as-needed, a library nothing refers to is dropped).
extern "C" const char weave_link_lock_redis;
[[gnu::used]] static const char* const weave_keep_lock_redis = &weave_link_lock_redis;
