#pragma once
// Selective packet spraying (seed 004, "Per-packet load balancing and
// selective packet spraying"): per-packet spraying only for traffic that can
// take reordering or that needs many links (elephants); everything else keeps
// one path. The rule here classifies by size: by the message's size as the
// application posts it (an RDMA write knows its length: `posted`), or by the
// bytes a QP has sent so far (`sent`, for transports that cannot know).

#include <cstdint>

namespace laps::policy {

enum class elephant_rule : std::uint8_t { posted, sent };

struct selective_config {
    std::uint64_t elephant_bytes = 1'000'000;
    elephant_rule rule = elephant_rule::posted;
};

constexpr bool sprays(const selective_config& c, std::uint64_t posted_bytes, std::uint64_t sent_bytes) noexcept
{
    return (c.rule == elephant_rule::posted ? posted_bytes : sent_bytes) >= c.elephant_bytes;
}

} // namespace laps::policy
