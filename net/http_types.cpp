#include "net/http_types.h"

#include <algorithm>
#include <cctype>

#include "proto/errors.h"

namespace trainyard::net {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

Result<void> check_request_fields(const HeaderFields& fields) {
  const auto count = [&](std::string_view name) {
    return std::count_if(fields.begin(), fields.end(), [&](const auto& field) { return same_name(field.first, name); });
  };
  for (const char* once : {"authorization", "host"}) {
    if (count(once) > 1) return Error::invalid_input(once, std::string("the ") + once + " header field may be sent once");
  }
  const auto encodings = count("transfer-encoding");
  if (encodings == 0) return {};
  if (count("content-length") > 0) {
    return Error::invalid_input("transfer-encoding", "Transfer-Encoding and Content-Length may not both frame a body");
  }
  const auto encoding = std::find_if(fields.begin(), fields.end(),
                                     [](const auto& field) { return same_name(field.first, "transfer-encoding"); });
  if (encodings > 1 || !same_name(encoding->second, "chunked")) {
    return Error::invalid_input("transfer-encoding", "the only Transfer-Encoding accepted is chunked, given once");
  }
  return {};
}

std::string percent_decode(std::string_view in, bool plus_is_space, bool& ok) {
  std::string out;
  out.reserve(in.size());
  ok = true;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      const int hi = i + 1 < in.size() ? hex_value(in[i + 1]) : -1;
      const int lo = i + 2 < in.size() ? hex_value(in[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        ok = false;
        return out;
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (plus_is_space && in[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

std::string percent_encode(std::string_view in) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : in) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

namespace {

Error bad_target(std::string problem) { return Error::invalid_input("path", std::move(problem)); }

Result<void> parse_segments(std::string_view path, std::vector<std::string>& segments) {
  segments.clear();
  if (path == "/") return {};
  std::size_t start = 1;
  while (true) {
    const auto slash = path.find('/', start);
    const std::string_view raw = path.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (raw.empty()) return bad_target("the path has an empty segment (\"//\" or a trailing \"/\")");
    bool ok = true;
    std::string segment = percent_decode(raw, false, ok);
    if (!ok) return bad_target("the path has a bad %-escape");
    if (segment.find('/') != std::string::npos) return bad_target("the path has an encoded \"/\" (%2F) in a segment");
    segments.push_back(std::move(segment));
    if (slash == std::string_view::npos) return {};
    start = slash + 1;
  }
}

Result<void> parse_query(std::string_view rest, std::map<std::string, std::string>& query) {
  bool ok = true;
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    std::string key = percent_decode(pair.substr(0, eq), true, ok);
    if (!ok) return bad_target("the query has a bad %-escape");
    std::string value = eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1), true, ok);
    if (!ok) return bad_target("the query has a bad %-escape");
    query[std::move(key)] = std::move(value);
  }
  return {};
}

}  // namespace

bool ResponseStream::push(Chunk text) {
  if (closed_) return false;
  if (queued_bytes_ + text->size() > buffer_limit_) {
    close();
    return false;
  }
  queued_bytes_ += text->size();
  queued_.push_back(std::move(text));
  wake();
  return true;
}

void ResponseStream::close() {
  if (std::exchange(closed_, true)) return;
  drained_ = nullptr;  // nothing more will be asked for
  wake();
}

Result<void> parse_target(HttpRequest& request) {
  const std::string_view target = request.target;
  if (target.empty() || target[0] != '/') return bad_target("the target must start with \"/\"");
  const auto qpos = target.find('?');
  request.path = std::string(target.substr(0, qpos));
  if (Result<void> segments = parse_segments(request.path, request.segments); !segments) return segments;
  request.query.clear();
  if (qpos == std::string_view::npos) return {};
  return parse_query(target.substr(qpos + 1), request.query);
}

}  // namespace trainyard::net
