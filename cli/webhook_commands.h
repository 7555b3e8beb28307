#pragma once
// The `webhook` commands (add, list, show, rm, test, deliveries), written as cli/commands.h
// describes; their code is cli/webhook_commands.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/api_request.h"
#include "cli/command_base.h"
#include "proto/flag_parser.h"
#include "proto/json_reader.h"

namespace trainyard::cli {

struct AddWebhook {
  static constexpr std::string_view kPath = "webhook add";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis =
      "webhook add URL --events job.failed,node.* [--format slack|json] [--share S] [--job ID] [--user U]";
  static constexpr std::string_view kSummary =
      "Register a webhook for the events named (types or globs, comma-separated) and print its\n"
      "id and signing secret (shown once). --format defaults to slack.";
  static std::vector<FlagSpec> flags();
  static AddWebhook parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;

  Json body;
  bool operator==(const AddWebhook&) const = default;
};

struct ListWebhooks {
  static constexpr std::string_view kPath = "webhook list";
  static constexpr std::string_view kSynopsis = "webhook list";
  static constexpr std::string_view kSummary = "List webhooks (yours; every one for an admin), never their secrets.";
  static std::vector<FlagSpec> flags();
  static ListWebhooks parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;
  bool operator==(const ListWebhooks&) const = default;
};

// show, rm and test: one webhook by id.
struct ShowWebhook {
  static constexpr std::string_view kPath = "webhook show";
  static constexpr std::string_view kSynopsis = "webhook show ID";
  static constexpr std::string_view kSummary = "Describe a webhook.";
  static std::vector<FlagSpec> flags();
  static ShowWebhook parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;
  std::int64_t id = 0;
  bool operator==(const ShowWebhook&) const = default;
};

struct RemoveWebhook {
  static constexpr std::string_view kPath = "webhook rm";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "webhook rm ID";
  static constexpr std::string_view kSummary = "Delete a webhook and its deliveries.";
  static std::vector<FlagSpec> flags();
  static RemoveWebhook parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;
  std::int64_t id = 0;
  bool operator==(const RemoveWebhook&) const = default;
};

struct TestWebhook {
  static constexpr std::string_view kPath = "webhook test";
  static constexpr bool kChangesState = true;
  static constexpr std::string_view kSynopsis = "webhook test ID";
  static constexpr std::string_view kSummary = "Send a signed test message now and show the receiver's answer.";
  static std::vector<FlagSpec> flags();
  static TestWebhook parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;
  std::int64_t id = 0;
  bool operator==(const TestWebhook&) const = default;
};

struct ListWebhookDeliveries {
  static constexpr std::string_view kPath = "webhook deliveries";
  static constexpr std::string_view kSynopsis = "webhook deliveries ID [--limit N]";
  static constexpr std::string_view kSummary =
      "A webhook's deliveries, newest first: events carried, state (pending, delivered, dead,\n"
      "retrying), attempts, the last answer and the next retry.";
  static std::vector<FlagSpec> flags();
  static ListWebhookDeliveries parse(const ParsedArgs& args);
  std::vector<ApiRequest> requests(const InputReader& read) const;
  std::string render(const Replies& replies, const RenderContext& ctx) const;
  std::int64_t id = 0;
  std::optional<std::int64_t> limit;
  bool operator==(const ListWebhookDeliveries&) const = default;
};

}  // namespace trainyard::cli
