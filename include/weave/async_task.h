// weave/async_task.h — which return types make a woven method asynchronous,
// and how Weave runs them: one trait per task type.
//
// A method returning boost::asio::awaitable<T> is woven as a coroutine: its
// interceptors wait by suspending (a lock wait holds no thread), and the
// call's context (its leases, weave/call_context.h) travels with it across
// every co_await. Weave runs the chain as Boost.Asio coroutines; another task
// type joins by saying how to turn its tasks into awaitables and back:
//
//   template <class T>
//   struct weave::async_task_traits<my::task<T>> {
//     using value_type = T;
//     static boost::asio::awaitable<T> to_awaitable(my::task<T> t);   // runs the method's task
//     static my::task<T> from_awaitable(boost::asio::awaitable<T> a); // what the proxy returns
//   };
//
// weavegen weaves a method as asynchronous when its return type has such a
// specialization (one for boost::asio::awaitable<T> ships here); any other
// coroutine type stays an error that names the supported ones.
#pragma once

#include "weave/abi.h"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

namespace WEAVE_NAMESPACE {

// Undefined for a type that is not a supported task type.
template <class Task>
struct async_task_traits;

template <class T>
struct async_task_traits<boost::asio::awaitable<T, boost::asio::any_io_executor>> {
  using value_type = T;
  static boost::asio::awaitable<T> to_awaitable(boost::asio::awaitable<T> task) { return task; }
  static boost::asio::awaitable<T> from_awaitable(boost::asio::awaitable<T> task) { return task; }
};

template <class Task>
concept async_task = requires { typename async_task_traits<Task>::value_type; };

}  // namespace weave
