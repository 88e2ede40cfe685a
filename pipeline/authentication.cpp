// Authenticated fabric packets (docs/security.md): the receive-side check of
// every LAPS packet when the engine has a key. Signing is engine::sign(),
// called wherever a packet's headers are written.
#include "pipeline/engine.hpp"
#include "pipeline/aging.hpp"
#include "wire/bytes.hpp"

#include <rte_hash.h>

#include <array>

namespace laps::pipeline {

bool engine::authentic(const rte_mbuf* m, const wire::parsed_packet& p, time_ns now) noexcept
{
    if (!p.authenticated()) {
        ++_counters.fabric_drop_unauthenticated;
        return false;
    }
    // The headers and trailer in one piece: in place when the first segment
    // holds them (always, for packets as LAPS sends them).
    const std::size_t need = p.trailer_offset() + wire::auth_size;
    std::array<std::uint8_t, wire::parse_window> copy;
    const auto* bytes = static_cast<const std::uint8_t*>(rte_pktmbuf_read(m, 0, static_cast<std::uint32_t>(need), copy.data()));
    if (bytes == nullptr || !_auth->verify(bytes, p)) {
        ++_counters.fabric_drop_unauthenticated;
        return false;
    }
    // Only now, with the tag verified, may the packet touch a replay window.
    const std::uint8_t* trailer = bytes + p.trailer_offset();
    const std::uint32_t origin = wire::load_be32(trailer + wire::auth_off::origin);
    const std::uint64_t counter = std::uint64_t{wire::load_be32(trailer + wire::auth_off::counter)} << 32 |
                                  wire::load_be32(trailer + wire::auth_off::counter + 4);
    wire::replay_window* window = replay_window_of(p.src_ip, origin, now);
    if (window == nullptr) {
        ++_counters.fabric_drop_auth_peers_full;
        return false;
    }
    if (!window->accept(counter)) {
        ++_counters.fabric_drop_replayed;
        return false;
    }
    return true;
}

wire::replay_window* engine::replay_window_of(std::uint32_t src_ip, std::uint32_t origin, time_ns now) noexcept
{
    const auth_peer_key key{src_ip, origin};
    std::int32_t position = rte_hash_lookup(_peer_hash.get(), &key);
    if (position < 0) {
        position = rte_hash_add_key(_peer_hash.get(), &key);
        if (position < 0) {
            // Full: forget the longest-quiet of the next 32 senders, if it has
            // been quiet for auth_peer_idle (a window forgotten is a window a
            // replay of that sender's old packets gets through once: only
            // under pressure, only after long quiet; docs/security.md).
            constexpr std::uint32_t look = 32;
            const std::uint32_t victim = longest_quiet(
                _peer_hand, _peers.size(), look, now, _config.auth_peer_idle, [this](std::uint32_t index) {
                    const auto& peer = _peers[index];
                    return peer.active ? &peer.last_seen : nullptr;
                });
            if (victim == no_slot) {
                return nullptr;
            }
            rte_hash_del_key(_peer_hash.get(), &_peer_keys[victim]);
            _peers[victim].active = false;
            ++_counters.auth_peer_evicted;
            position = rte_hash_add_key(_peer_hash.get(), &key);
        }
        if (position < 0 || static_cast<std::uint32_t>(position) >= _peers.size()) {
            if (position >= 0) {
                rte_hash_del_key(_peer_hash.get(), &key);
            }
            return nullptr;
        }
        auto& fresh = _peers[static_cast<std::uint32_t>(position)];
        fresh.active = true;
        fresh.window = wire::replay_window{};
        _peer_keys[static_cast<std::uint32_t>(position)] = key;
    }
    auto& peer = _peers[static_cast<std::uint32_t>(position)];
    peer.last_seen = now;
    return &peer.window;
}

} // namespace laps::pipeline
