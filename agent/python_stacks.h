#pragma once
// Python stacks from a rank's own dump: the job's sitecustomize (python/sitecustomize.py) has
// faulthandler write every thread's stack to the process's TRAINYARD_STACKS_FILE when it gets
// TRAINYARD_STACKS_SIGNAL, and the agent sends that signal once a rank has been idle a while
// (agent/rank_activity.h). Pure: text in, text out.
#include <string>
#include <string_view>

namespace trainyard::agent {

// `text` with every control character and byte that is not printable UTF-8 replaced by '?': what
// the daemon accepts in a report (proto/messages.h), whatever a job named its files.
std::string printable(std::string_view text);

// The main thread's stack in a faulthandler dump (`Thread 0x... (most recent call first):` blocks
// of `  File "PATH", line N in FUNCTION` lines), as "PATH:N in FUNCTION" lines, most recent call
// first, cut to `max_chars` by dropping the oldest calls. The main thread is the one whose oldest
// call is a module's top level (`<module>`); else the thread that took the signal; else the last.
// Of several dumps, the last counts. Names are made `printable`. Empty when the text holds no thread.
std::string main_thread_stack(std::string_view dump, std::size_t max_chars);

}  // namespace trainyard::agent
