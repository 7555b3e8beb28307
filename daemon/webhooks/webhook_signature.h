#pragma once
// Webhook request signing: Slack's scheme under our header names. A receiver recomputes
// "v0=" + hex(HMAC-SHA256(secret, "v0:" + timestamp + ":" + body)) and compares.
#include <cstdint>
#include <string>
#include <string_view>

namespace trainyard::daemon {

inline constexpr std::string_view kWebhookEventIdHeader = "X-Trainyard-Event-Id";
inline constexpr std::string_view kWebhookTimestampHeader = "X-Trainyard-Request-Timestamp";
inline constexpr std::string_view kWebhookSignatureHeader = "X-Trainyard-Signature";

// `unix_seconds` is the value sent in X-Trainyard-Request-Timestamp.
std::string webhook_signature(std::string_view secret, std::int64_t unix_seconds, std::string_view body);
// The same for a timestamp given as the header's text (a receiver verifying what it was sent).
std::string webhook_signature(std::string_view secret, std::string_view timestamp, std::string_view body);
// A new webhook's signing secret: "whsec_" + 64 hex characters from the OpenSSL CSPRNG.
std::string generate_webhook_secret();

}  // namespace trainyard::daemon
