#include "net/steady_timers.h"

#include <boost/asio/steady_timer.hpp>

namespace trainyard::net {
namespace {

class SteadyTimer final : public Timer {
 public:
  explicit SteadyTimer(boost::asio::io_context& io) : timer_(io) {}
  void start(Millis after, std::function<void()> fire) override {
    timer_.expires_after(after);
    timer_.async_wait([fire = std::move(fire)](const boost::system::error_code& ec) {
      if (!ec) fire();
    });
  }
  void cancel() override { timer_.cancel(); }

 private:
  boost::asio::steady_timer timer_;
};

}  // namespace

std::unique_ptr<Timer> SteadyTimers::make() { return std::make_unique<SteadyTimer>(io_); }

}  // namespace trainyard::net
