#pragma once
// The channel between the agent and a simulated rank's own process (agent/simulated_run.h,
// agent/simulated_rank_process.h): one AF_UNIX SOCK_SEQPACKET socket pair, so every message
// arrives whole and may carry a descriptor (SCM_RIGHTS). A message is one JSON object with one key
// naming what it is:
//
//   agent -> rank   {"start": {...}}     what to train (the launch message as the daemon sent it),
//                                        on which core, with which faults and collective timeout
//                   {"faults": [...]}    the node's injected faults changed
//                   {"claimed": {...}}   the answer to a claim, with the connection's descriptor
//   rank -> agent   {"claim": {...}}     hand me my left neighbour's data-plane connection
//                   {"progress": {...}}  step, phase and timing, for the heartbeat
//                   {"metrics": "..."}   step metrics and published checkpoints (an encoded MetricsMsg)
//                   {"exit": {...}}      how training ended, before the process exits
//
// The rank's process runs as the job's account, so the agent reads what it sends as it reads any
// input from outside: through the bounded JSON reader, every field validated.
#include <optional>
#include <string>

#include "neuron/tcp_socket.h"
#include "proto/json_reader.h"

namespace trainyard::agent {

// Large enough for a launch of a few thousand ranks' peer addresses.
inline constexpr std::size_t kMaxChannelMessageBytes = 1 << 20;

// The agent's end and the rank's end, both close-on-exec.
std::pair<neuron::Socket, neuron::Socket> make_rank_channel();

// Sends one message, with `passed_fd` when it is not -1. false when the peer is gone or, with
// `dont_wait`, when its queue is full (the message is then dropped).
bool send_channel_message(int fd, const Json& message, int passed_fd = -1, bool dont_wait = false);

struct ChannelMessage {
  Json body;               // an object
  neuron::Socket passed;   // the descriptor that came with it, if any
};

// Blocks for the next message; nullopt at the end of the stream (the peer closed or died). Throws
// InvalidInput for a message that is too long or not a JSON object.
std::optional<ChannelMessage> receive_channel_message(int fd);

// The first message a process the agent started reads: the object of its {"start": ...}. Throws
// InvalidInput when there is none or the first message is something else.
Json receive_start_message(int fd);

}  // namespace trainyard::agent
