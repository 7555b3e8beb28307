#include <gtest/gtest.h>

#include "agent/python_stacks.h"

namespace trainyard::agent {
namespace {

// As faulthandler.dump_traceback(all_threads=True) writes it from a signal handler.
constexpr std::string_view kDump =
    "Thread 0x00007f3a1c7fe640 (most recent call first):\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 324 in wait\n"
    "  File \"/usr/lib/python3.11/threading.py\", line 1002 in _bootstrap\n"
    "\n"
    "Current thread 0x00007f3a2f1e4740 (most recent call first):\n"
    "  File \"/usr/lib/python3/dist-packages/torch/autograd/__init__.py\", line 200 in backward\n"
    "  File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 487 in backward\n"
    "  File \"/home/u/ddp_train.py\", line 40 in main\n"
    "  File \"/home/u/ddp_train.py\", line 63 in <module>\n";

TEST(PythonStacks, TheMainThreadIsTheOneRunningAModuleMostRecentCallFirst) {
  EXPECT_EQ(main_thread_stack(kDump, 4096),
            "/usr/lib/python3/dist-packages/torch/autograd/__init__.py:200 in backward\n"
            "/usr/lib/python3/dist-packages/torch/_tensor.py:487 in backward\n"
            "/home/u/ddp_train.py:40 in main\n"
            "/home/u/ddp_train.py:63 in <module>");
}

TEST(PythonStacks, OfSeveralDumpsTheLastCounts) {
  const std::string two = std::string(kDump) + "\nCurrent thread 0x00007f3a2f1e4740 (most recent call first):\n"
                                                "  File \"/home/u/ddp_train.py\", line 17 in hang_here\n"
                                                "  File \"/home/u/ddp_train.py\", line 63 in <module>\n";
  EXPECT_EQ(main_thread_stack(two, 4096), "/home/u/ddp_train.py:17 in hang_here\n/home/u/ddp_train.py:63 in <module>");
}

TEST(PythonStacks, WithoutAModuleFrameTheThreadThatTookTheSignal) {
  const std::string dump = "Thread 0x1 (most recent call first):\n  File \"a.py\", line 1 in f\n\n"
                           "Current thread 0x2 (most recent call first):\n  File \"b.py\", line 2 in g\n";
  EXPECT_EQ(main_thread_stack(dump, 4096), "b.py:2 in g");
}

TEST(PythonStacks, CutsTheOldestCallsAndReplacesControlCharacters) {
  EXPECT_EQ(main_thread_stack(kDump, 80), "/usr/lib/python3/dist-packages/torch/autograd/__init__.py:200 in backward");
  const std::string hostile = "Current thread 0x2 (most recent call first):\n  File \"\x1b[31mevil.py\", line 2 in g\x07\n";
  EXPECT_EQ(main_thread_stack(hostile, 4096), "?[31mevil.py:2 in g?");
}

TEST(PythonStacks, NamesThatAreNotPrintableUtf8BecomeQuestionMarks) {
  EXPECT_EQ(printable("caf\xc3\xa9.py"), "caf\xc3\xa9.py");
  EXPECT_EQ(printable("a\xff\xc2\x85" "b\tc"), "a???b?c") << "an invalid byte, a C1 control (2 bytes), a tab";
}

TEST(PythonStacks, TextWithoutAThreadGivesNothing) {
  EXPECT_EQ(main_thread_stack("", 4096), "");
  EXPECT_EQ(main_thread_stack("garbage\n  File \"x.py\", line 1 in f\n", 4096), "");
}

}  // namespace
}  // namespace trainyard::agent
