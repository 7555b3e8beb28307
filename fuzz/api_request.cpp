// The API behind the route table (Api::handle) with fuzzed requests (fuzz/api_daemon.h): the
// input's first byte picks the caller's token, the rest spells the request. One daemon serves every
// input, so state built by one request (jobs, shares, tokens) is there for the next. Every request
// must be answered exactly once, with a status from 100 to 499 (the store never fails here), and
// every JSON answer must parse; an error's body must be the API's {"error":{"code","message"}}.
#include "fuzz/api_daemon.h"

using namespace trainyard;
using namespace trainyard::fuzzing;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Daemon* daemon = new Daemon();  // lives for the whole run: its workers' threads too
  if (size == 0) return 0;
  net::HttpRequest request;
  const char* secret = kSecrets[data[0] % std::size(kSecrets)];
  if (!parse_request(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), secret, request)) return 0;
  const net::HttpResponse answer = answer_once(*daemon, std::move(request))->last;
  // The store never fails, so no input may cause a 5xx.
  if (answer.status < 100 || answer.status > 499) std::abort();
  check_shape(answer);
  return 0;
}
