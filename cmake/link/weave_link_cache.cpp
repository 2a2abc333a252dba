// Compiled into every target that links Weave::cache (INTERFACE_SOURCES): it
// refers to the object that registers the cache interceptors, so a static
// link keeps that object and a shared link keeps the library.
extern "C" const char weave_link_cache;
[[gnu::used]] static const char* const weave_keep_cache = &weave_link_cache;
