#include <gtest/gtest.h>

#include "daemon/policy/process_where.h"

namespace trainyard::daemon {
namespace {

constexpr const char* kWaitingInBackward =
    "/usr/lib/python3/dist-packages/torch/autograd/__init__.py:200 in backward\n"
    "/usr/lib/python3/dist-packages/torch/_tensor.py:487 in backward\n"
    "/home/u/ddp_train.py:40 in main\n"
    "/home/u/ddp_train.py:63 in <module>";
constexpr const char* kAsleepInItsOwnCode = "/home/u/ddp_train.py:17 in hang_here\n/home/u/ddp_train.py:63 in <module>";

ProcessWhere process(int pid, std::string state, std::string stack, std::string wchan = "") {
  return {0, pid, std::move(state), std::move(wchan), std::move(stack)};
}

TEST(ProcessWhere, AStoppedProcessOutranksEveryStack) {
  EXPECT_EQ(judge_where({process(1, "S", kAsleepInItsOwnCode), process(2, "T", "")}), WhereVerdict::stopped);
  EXPECT_EQ(judge_where({process(1, "t", "")}), WhereVerdict::stopped);
}

TEST(ProcessWhere, AStackInsideACollectiveOrBackwardWaitsOnPeersAnyOtherIsTheHang) {
  EXPECT_EQ(judge_where({process(1, "S", kWaitingInBackward)}), WhereVerdict::waiting_on_peers);
  EXPECT_EQ(judge_where({process(1, "S", "/x/torch/distributed/distributed_c10d.py:1500 in all_reduce\n/t.py:3 in <module>")}),
            WhereVerdict::waiting_on_peers);
  EXPECT_EQ(judge_where({process(1, "S", kWaitingInBackward), process(2, "S", kAsleepInItsOwnCode)}),
            WhereVerdict::hung_itself);
  EXPECT_EQ(judge_where({process(1, "S", "", "do_epoll_wait")}), WhereVerdict::unknown);
  EXPECT_EQ(judge_where({}), WhereVerdict::unknown);
}

TEST(ProcessWhere, SaysTheJobsOwnInnermostCallAndTheLibraryCallItIsInside) {
  EXPECT_EQ(where_text(process(77, "S", kWaitingInBackward, "do_epoll_wait")),
            "pid 77 sleeping in do_epoll_wait: ddp_train.py:40 in main (inside autograd/__init__.py:200 in backward)");
  EXPECT_EQ(where_text(process(78, "S", kAsleepInItsOwnCode, "hrtimer_nanosleep")),
            "pid 78 sleeping in hrtimer_nanosleep: ddp_train.py:17 in hang_here");
  EXPECT_EQ(where_text(process(79, "T", kAsleepInItsOwnCode, "do_signal_stop")), "pid 79 stopped (state T)");
  EXPECT_EQ(where_text(process(80, "D", "", "")), "pid 80 in uninterruptible I/O");
  EXPECT_EQ(where_text(process(81, "S", "/usr/lib/python3.11/threading.py:324 in wait")),
            "pid 81 sleeping: python3.11/threading.py:324 in wait");
}

}  // namespace
}  // namespace trainyard::daemon
