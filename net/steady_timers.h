#pragma once
// proto/timers.h's timers on an io_context's steady clock: what the daemon and the agent run on.
#include <boost/asio/io_context.hpp>
#include <memory>

#include "proto/timers.h"

namespace trainyard::net {

class SteadyTimers final : public Timers {
 public:
  explicit SteadyTimers(boost::asio::io_context& io) : io_(io) {}
  std::unique_ptr<Timer> make() override;

 private:
  boost::asio::io_context& io_;
};

}  // namespace trainyard::net
