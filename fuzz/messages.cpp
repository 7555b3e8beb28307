// The daemon <-> agent codec on arbitrary frames, read as either side would: a frame parses or is
// refused with InvalidInput, and what parsed encodes to a frame that parses back to the same frame.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "proto/messages.h"

using namespace trainyard;

namespace {

template <class Message, class Parse>
void parse_and_reencode(std::string_view frame, Parse parse) {
  std::string encoded;
  try {
    encoded = encode(Message{parse(frame)});
  } catch (const InvalidInput&) {
    return;
  }
  if (encode(Message{parse(encoded)}) != encoded) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view frame(reinterpret_cast<const char*>(data), size);
  parse_and_reencode<AgentMessage>(frame, parse_agent_message);
  parse_and_reencode<DaemonMessage>(frame, parse_daemon_message);
  return 0;
}
