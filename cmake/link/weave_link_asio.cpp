// Compiled into every target that links Weave::asio (INTERFACE_SOURCES): it
// refers to the objects that make the built-in interceptors asynchronous
// (lock, dedupe), so a static link keeps them and a shared link keeps the library.
extern "C" const char weave_link_asio;
extern "C" const char weave_link_asio_dedupe;
[[gnu::used]] static const char* const weave_keep_asio[] = {&weave_link_asio, &weave_link_asio_dedupe};
