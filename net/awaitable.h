#pragma once
// The completion token of net/'s coroutines: an operation's error comes back as the first element of
// a tuple, so a peer that hangs up or times out is an ordinary branch, never an exception.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace trainyard::net {

inline constexpr auto use_tuple = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace trainyard::net
