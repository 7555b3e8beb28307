#include "agent/output_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace trainyard::agent {
namespace {

// Writes all of it unless the file refuses; false then.
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t wrote = ::write(fd, data, size);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    data += wrote;
    size -= static_cast<std::size_t>(wrote);
  }
  return true;
}

bool is_dev_null(const struct stat& st) { return S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3); }

}  // namespace

OutputCopy::OutputCopy(boost::asio::io_context& io, int log_fd, std::vector<Stream> streams, std::string who)
    : log_fd_(log_fd), who_(std::move(who)) {
  for (Stream& stream : streams) {
    auto reader = std::make_unique<Reader>();
    ::fcntl(stream.pipe_fd, F_SETFL, ::fcntl(stream.pipe_fd, F_GETFL) | O_NONBLOCK);
    reader->pipe = std::make_unique<boost::asio::posix::stream_descriptor>(io, stream.pipe_fd);
    reader->file = std::move(stream.file);
    struct stat st {};
    if (stream.file_fd >= 0 && ::fstat(stream.file_fd, &st) == 0 && S_ISREG(st.st_mode)) {
      reader->file_fd = stream.file_fd;
    } else if (stream.file_fd >= 0) {
      if (!is_dev_null(st)) {
        const std::string line = "trainyard-agent: " + reader->file +
                                 " is not a regular file: output is not copied to it (it is kept in this log)\n";
        (void)write_all(log_fd_, line.data(), line.size());
        spdlog::warn("event=output_copy_refused {} file=\"{}\" reason=\"not a regular file\"", who_, reader->file);
      }
      ::close(stream.file_fd);
    }
    readers_.push_back(std::move(reader));
  }
}

OutputCopy::~OutputCopy() {
  for (auto& reader : readers_) {
    if (reader->file_fd >= 0) ::close(reader->file_fd);
  }
  ::close(log_fd_);
}

void OutputCopy::start() {
  for (std::size_t i = 0; i < readers_.size(); ++i) read_next(i);
}

void OutputCopy::read_next(std::size_t index) {
  Reader& reader = *readers_[index];
  if (!reader.pipe->is_open()) return;
  reader.pipe->async_read_some(boost::asio::buffer(reader.buffer),
                               [self = shared_from_this(), index](const boost::system::error_code& error, std::size_t size) {
                                 Reader& r = *self->readers_[index];
                                 if (size > 0) self->copy(r, r.buffer.data(), size);
                                 if (error) {
                                   boost::system::error_code ignored;
                                   r.pipe->close(ignored);  // every writer is gone, or stopped
                                   return;
                                 }
                                 self->read_next(index);
                               });
}

void OutputCopy::drain() {
  for (auto& reader : readers_) {
    if (!reader->pipe->is_open()) continue;
    for (;;) {
      const ssize_t got = ::read(reader->pipe->native_handle(), reader->buffer.data(), reader->buffer.size());
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;  // empty for now (EAGAIN), or no writer left
      copy(*reader, reader->buffer.data(), static_cast<std::size_t>(got));
    }
  }
}

void OutputCopy::stop() {
  for (auto& reader : readers_) {
    boost::system::error_code ignored;
    reader->pipe->close(ignored);
  }
}

void OutputCopy::copy(Reader& reader, const char* data, std::size_t size) {
  (void)write_all(log_fd_, data, size);  // the log is the agent's, in its attempt directory
  if (reader.file_fd < 0 || write_all(reader.file_fd, data, size)) return;
  spdlog::warn("event=output_copy_stopped {} file=\"{}\" error=\"{}\"", who_, reader.file, std::strerror(errno));
  const std::string line = "trainyard-agent: writing to " + reader.file + " failed (" + std::strerror(errno) +
                           "): output is no longer copied to it (it is kept in this log)\n";
  (void)write_all(log_fd_, line.data(), line.size());
  ::close(reader.file_fd);
  reader.file_fd = -1;
}

}  // namespace trainyard::agent
