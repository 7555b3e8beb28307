#include "cli/runner.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "cli/command_line.h"
#include "cli/table.h"

namespace trainyard::cli {
namespace {

constexpr std::size_t kBodyExcerpt = 200;

bool is_success(int status) { return status >= 200 && status < 300; }

HttpRequest to_http(const ApiRequest& request, const std::string& token) {
  HttpRequest http{.method = request.method, .target = request.target};
  http.headers = {{"authorization", "Bearer " + token}, {"accept", "application/json"}};
  if (request.body) {
    http.headers.emplace("content-type", "application/json");
    http.body = request.body->dump();
  }
  return http;
}

int usage_error(const CliHost& host, const InvalidInput& e, const std::string& help_command) {
  host.err << "trainyard: " << terminal_safe(e.what()) << "\nRun '" << help_command << " --help' for usage.\n";
  return kExitUsage;
}

int failure(const CliHost& host, const std::string& message) {
  host.err << "trainyard: " << terminal_safe(message) << "\n";
  return kExitFailed;
}

// Performs the requests in order; stops at the first that fails. Returns the exit status.
int execute(const Command& command, const GlobalOptions& global, const CliHost& host) {
  Connection connection;
  ServerUrl url;
  try {
    connection = resolve_connection(global, host.env, host.read_file);
    url = parse_server_url(connection.server);
    url.trust.ca_file = connection.ca_file;
    if (!connection.ca_from.empty()) url.trust.ca_from = connection.ca_from;
  } catch (const InvalidInput& e) {
    return usage_error(host, e, "trainyard");
  }
  std::vector<ApiRequest> requests;
  try {
    requests = requests_for(command, host.read_input);
  } catch (const InvalidInput& e) {
    return failure(host, e.what());
  }

  std::unique_ptr<HttpClient> client;
  try {
    client = host.connect(url);
  } catch (const InvalidInput& e) {
    return usage_error(host, e, "trainyard");
  }
  Replies replies;
  for (const ApiRequest& request : requests) {
    const HttpResult result = client->send(to_http(request, connection.token));
    if (!result) return failure(host, result.error().message);
    const HttpResponse& response = *result;
    if (!is_success(response.status)) return failure(host, error_message(response.status, response.body));
    Json body = Json::parse(response.body, nullptr, false);
    if (body.is_discarded()) {
      return failure(host, "daemon at " + url.text + " answered " + request.method + " " + request.target +
                               " with a body that is not JSON");
    }
    replies.push_back(std::move(body));
  }

  if (global.json) {
    host.out << render_json(command, replies).dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  const std::string text = render_text(command, replies, RenderContext{host.clock.system_now()});
  host.out << (raw_output(command) && !host.out_is_terminal ? text : terminal_safe(text));
  const Notices notices = notices_of(command, replies);
  for (const auto& line : notices.lines) host.err << "trainyard: " << terminal_safe(line) << "\n";
  return notices.failed ? kExitFailed : kExitOk;
}

}  // namespace

std::string error_message(int status, const std::string& body) {
  const std::string http = "HTTP " + std::to_string(status);
  const std::string hint = status == 401 ? " (check --token-file or $TRAINYARD_TOKEN)" : "";
  const Json document = Json::parse(body, nullptr, false);
  if (document.is_object() && document.contains("error") && document["error"].is_object()) {
    const Json& error = document["error"];
    const std::string message = text_of(error, "message");
    const std::string code = text_of(error, "code");
    if (message != kAbsent) return message + " (" + http + (code == kAbsent ? "" : ", " + code) + ")" + hint;
  }
  if (body.empty()) return http + hint;
  return http + ": " + truncate(body, kBodyExcerpt) + hint;
}

int run_cli(const std::vector<std::string>& args, const CliHost& host) {
  Invocation invocation;
  try {
    invocation = parse_command_line(args);
  } catch (const UsageError& e) {
    return usage_error(host, e, e.help_command());
  }
  if (const auto* help = std::get_if<ShowHelp>(&invocation.action)) {
    host.out << help->text;
    return kExitOk;
  }
  return execute(std::get<Command>(invocation.action), invocation.global, host);
}

std::optional<std::string> read_local_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string read_input_file(const std::string& path) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidInput(path, std::string("cannot read: ") + std::strerror(errno));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace trainyard::cli
