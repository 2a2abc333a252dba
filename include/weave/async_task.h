// weave/async_task.h — which return types make a woven method asynchronous,
// and how Weave runs them: one trait per task type.
//
// A method returning weave::net::awaitable<T> (boost::asio::awaitable<T>, or
// asio::awaitable<T> on standalone Asio: weave/asio.h) is woven as a
// coroutine: its interceptors wait by suspending (a lock wait holds no
// thread), and the call's context (its leases, weave/call_context.h) travels
// with it across every co_await. Weave runs the chain as Asio coroutines;
// another task type joins by saying how to turn its tasks into awaitables and
// back:
//
//   template <class T>
//   struct weave::async_task_traits<my::task<T>> {
//     using value_type = T;
//     static weave::net::awaitable<T> to_awaitable(my::task<T> t);   // runs the method's task
//     static my::task<T> from_awaitable(weave::net::awaitable<T> a); // what the proxy returns
//   };
//
// weavegen weaves a method as asynchronous when its return type has such a
// specialization (one for weave::net::awaitable<T> ships here); any other
// coroutine type stays an error that names the supported ones.
#pragma once

#include "weave/abi.h"
#include "weave/asio.h"

namespace WEAVE_NAMESPACE {

// Undefined for a type that is not a supported task type.
template <class Task>
struct async_task_traits;

template <class T>
struct async_task_traits<net::awaitable<T, net::any_io_executor>> {
  using value_type = T;
  static net::awaitable<T> to_awaitable(net::awaitable<T> task) { return task; }
  static net::awaitable<T> from_awaitable(net::awaitable<T> task) { return task; }
};

template <class Task>
concept async_task = requires { typename async_task_traits<Task>::value_type; };

}  // namespace weave
