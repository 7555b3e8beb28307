// The one translation unit that compiles Asio, Asio's SSL support and Beast (separate
// compilation, BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION): every other
// target links these definitions instead of instantiating them again, which keeps builds fast.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
