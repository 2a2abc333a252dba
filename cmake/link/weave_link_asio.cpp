// Compiled into every target that links Weave::asio (INTERFACE_SOURCES): it
// refers to the objects that make the built-in interceptors asynchronous
// (lock, dedupe, cache), so a static link keeps them and a shared link keeps
// the library.
extern "C" const char weave_link_asio;
extern "C" const char weave_link_asio_dedupe;
extern "C" const char weave_link_asio_cache;
[[gnu::used]] static const char* const weave_keep_asio[] = {&weave_link_asio, &weave_link_asio_dedupe,
                                                            &weave_link_asio_cache};
