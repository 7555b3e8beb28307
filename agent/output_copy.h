#pragma once
// A rank's output copied to files of the job's choosing (sbatch -o/-e) as well as to the log the
// agent keeps. The rank writes into pipes; the agent reads them on its I/O thread and writes every
// chunk to the log and to the stream's file, so `trainyard logs` and `tail -f` of the user's file
// see the same bytes. The files were opened by the rank's own process as the job's account
// (agent/process_spawn.h), so they are only where that account may write; anything but a regular
// file (a FIFO nobody reads would stall the agent) is not written, and said so in the log.
// /dev/null, as Slurm users give it, is taken at its word.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

namespace trainyard::agent {

class OutputCopy : public std::enable_shared_from_this<OutputCopy> {
 public:
  struct Stream {
    int pipe_fd = -1;  // the read end, owned from now on
    int file_fd = -1;  // owned; -1: the log only
    std::string file;  // its path as the job gave it, for what is logged
  };
  // Takes `log_fd` and every descriptor of `streams`; call `start` once it is shared.
  OutputCopy(boost::asio::io_context& io, int log_fd, std::vector<Stream> streams, std::string who);
  ~OutputCopy();
  OutputCopy(const OutputCopy&) = delete;
  OutputCopy& operator=(const OutputCopy&) = delete;

  // Copies as the rank writes, until every writer of each pipe is gone or `stop`.
  void start();
  // Copies what the pipes hold now without waiting: what the processes wrote before they exited,
  // so the exit's log tail has it.
  void drain();
  // Stops copying (the rank's end): later output of processes that outlived it is not read.
  void stop();

 private:
  struct Reader {
    std::unique_ptr<boost::asio::posix::stream_descriptor> pipe;
    int file_fd = -1;
    std::string file;
    std::array<char, 64 * 1024> buffer{};
  };
  void read_next(std::size_t index);
  void copy(Reader& reader, const char* data, std::size_t size);

  int log_fd_;
  std::string who_;  // "job=J attempt=A rank=R", for log lines
  std::vector<std::unique_ptr<Reader>> readers_;
};

}  // namespace trainyard::agent
