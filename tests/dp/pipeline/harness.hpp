#pragma once
// Test fixtures for engines on real mbufs: mempools, frames in and out of
// mbufs, engine configs, and a two-path delay line on a fake clock.

#include "../../unit/wire/packet_builder.hpp"
#include "pipeline/engine.hpp"
#include "wire/mbuf_parse.hpp"

#include <gtest/gtest.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace laps::test {

struct pool_deleter {
    void operator()(rte_mempool* p) const noexcept { rte_mempool_free(p); }
};
using pool_ptr = std::unique_ptr<rte_mempool, pool_deleter>;

inline pool_ptr make_pool(const std::string& name, unsigned n, std::uint16_t data_room = RTE_MBUF_DEFAULT_BUF_SIZE)
{
    return pool_ptr(rte_pktmbuf_pool_create(name.c_str(), n, 0, 0, data_room, SOCKET_ID_ANY));
}

inline unsigned in_use(const rte_mempool* p)
{
    return rte_mempool_in_use_count(p);
}

inline rte_mbuf* to_mbuf(rte_mempool* pool, const bytes& frame)
{
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) {
        return nullptr;
    }
    char* p = rte_pktmbuf_append(m, static_cast<std::uint16_t>(frame.size()));
    if (!frame.empty()) { // an empty vector's data() may be null: no memcpy from it
        std::memcpy(p, frame.data(), frame.size());
    }
    return m;
}

inline bytes from_mbuf(const rte_mbuf* m)
{
    bytes out(m->pkt_len);
    const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, out.data());
    if (p != out.data()) {
        std::memcpy(out.data(), p, m->pkt_len);
    }
    return out;
}

inline std::vector<rte_mbuf*> take_fabric(pipeline::engine& e)
{
    std::vector<rte_mbuf*> out(e.pending_to_fabric());
    out.resize(e.take_to_fabric(out.data(), static_cast<std::uint16_t>(out.size())));
    return out;
}

inline std::vector<rte_mbuf*> take_host(pipeline::engine& e)
{
    std::vector<rte_mbuf*> out(e.pending_to_host());
    out.resize(e.take_to_host(out.data(), static_cast<std::uint16_t>(out.size())));
    return out;
}

inline void free_all(const std::vector<rte_mbuf*>& v)
{
    for (auto* m : v) {
        rte_pktmbuf_free(m);
    }
}

inline wire::mac_address mac_of(std::uint8_t last)
{
    return {0x02, 0, 0, 0, 0, last};
}

// A host at 10.0.0.<host> with MAC 02:00:00:00:00:<host>, next hop ...:fe.
inline pipeline::engine_config host_config(const std::string& name, std::uint8_t host, rte_mempool* control)
{
    pipeline::engine_config c;
    c.name = name;
    c.control_pool = control;
    c.outer.own_mac = mac_of(host);
    c.outer.next_hop_mac = mac_of(0xfe);
    c.outer.own_ip = 0x0a000000u | host;
    c.outer.mtu = 1500;
    c.algo.tables.flow_capacity = 64;
    c.algo.tables.pit_capacity = 256;
    c.algo.tables.pst_capacity = 64;
    c.algo.tables.estimate_clock_offset = false;
    c.algo.retransmit.window_packets = 64;
    c.algo.congestion.pacer_burst_bytes = 16384;
    // The *_coalesced tests (meson.build) run every test with receivers
    // that coalesce their ACKs (docs/wire-format.md "ACK_RUN").
    if (const char* acks = std::getenv("LAPS_TEST_ACKS"); acks != nullptr && std::string_view(acks) == "coalesced") {
        c.acks = pipeline::ack_mode::coalesced;
    }
    return c;
}

inline tables::pit_row path_row(tables::path_id pid, std::int64_t base_ns, std::vector<std::uint32_t> anchors)
{
    tables::pit_row r;
    r.pid = pid;
    r.base_ns = base_ns;
    r.anchor_count = static_cast<std::uint8_t>(anchors.size());
    for (std::size_t i = 0; i < anchors.size(); ++i) {
        r.anchors[i] = anchors[i];
    }
    return r;
}

// Host 1 sending to 10.0.0.2 over one path (pid 5, base 10 us), probing off:
// every packet on the fabric is DATA or its ACK.
inline pipeline::engine_config one_path_sender_config(const std::string& name, rte_mempool* control, std::uint32_t epoch)
{
    auto c = host_config(name, 1, control);
    c.algo.paths.pit = {path_row(5, 10'000, {})};
    c.algo.paths.pst = {{tables::address::ipv4(0x0a000002), {5}}};
    c.epoch = epoch;
    c.algo.selection.probing = false;
    return c;
}

// Host 2 receiving in order, with room for 4,096 flows.
inline pipeline::engine_config in_order_receiver_config(const std::string& name, rte_mempool* control)
{
    auto c = host_config(name, 2, control);
    c.in_order = true;
    c.algo.tables.flow_capacity = 4096;
    return c;
}

// Frames from 10.0.0.1 to 10.0.0.2 carrying a 32-bit id in their first payload bytes.
inline bytes data_frame(std::uint32_t id, std::size_t payload = 1000, std::uint16_t sport = 1000)
{
    bytes body(payload, 0);
    for (std::size_t i = 0; i < 4 && i < payload; ++i) {
        body[i] = static_cast<std::uint8_t>(id >> (8 * (3 - i)));
    }
    return packet_builder()
        .eth(mac_of(2), mac_of(1))
        .ipv4("10.0.0.1", "10.0.0.2")
        .udp(sport, 5000)
        .payload(std::span<const std::uint8_t>(body))
        .build();
}

inline std::uint32_t frame_id(const bytes& frame)
{
    const std::size_t off = 14 + 20 + 8;
    return (std::uint32_t{frame[off]} << 24) | (std::uint32_t{frame[off + 1]} << 16) |
           (std::uint32_t{frame[off + 2]} << 8) | frame[off + 3];
}

// One packet from the fabric into `e` at `now`; whatever it answers or
// delivers is freed (forged-packet tests look at counters and tables).
inline void feed(rte_mempool* pool, pipeline::engine& e, const bytes& packet, common::time_ns now)
{
    rte_mbuf* m = to_mbuf(pool, packet);
    ASSERT_NE(m, nullptr);
    e.from_fabric(&m, 1, now);
    free_all(take_fabric(e));
    free_all(take_host(e));
}

// The ids of the frames `e` has for its host (data_frame's), freed.
inline std::vector<std::uint32_t> host_frame_ids(pipeline::engine& e)
{
    std::vector<std::uint32_t> ids;
    for (rte_mbuf* m : take_host(e)) {
        ids.push_back(frame_id(from_mbuf(m)));
        rte_pktmbuf_free(m);
    }
    return ids;
}

// A fabric between two engines where each pid has its own one-way delay and
// rate, in both directions (ACKs return on the reversed path). A packet
// "crosses the wire" as a linear copy into `wire_pool`, as a NIC would give it.
class delay_line {
public:
    struct path {
        common::time_ns delay_ns;
        double rate_bps; // serialisation on the path's bottleneck, 0: none
    };

    delay_line(rte_mempool* wire_pool, std::map<tables::path_id, path> paths)
        : _pool(wire_pool), _paths(std::move(paths))
    {
    }

    // Drop DATA (first transmissions and resends alike) with these (flow_id, seq).
    std::function<bool(const wire::laps_header&)> drop_data;

    void send(rte_mbuf* m, int to, common::time_ns now)
    {
        const auto r = wire::parse(m);
        common::time_ns at = now;
        if (r.ok()) {
            const auto& h = r.packet.header;
            if (h.type == wire::packet_type::data && drop_data && drop_data(h)) {
                ++dropped;
                rte_pktmbuf_free(m);
                return;
            }
            auto& p = _paths.at(h.pid);
            auto& busy = _busy_until[{h.pid, to}];
            common::time_ns start = std::max(now, busy);
            if (p.rate_bps > 0 && h.type == wire::packet_type::data) {
                busy = start + static_cast<common::time_ns>(m->pkt_len * 8e9 / p.rate_bps);
                start = busy;
            }
            at = start + p.delay_ns;
            ++per_path[h.pid];
        }
        rte_mbuf* copy = rte_pktmbuf_copy(m, _pool, 0, UINT32_MAX);
        rte_pktmbuf_free(m);
        if (copy == nullptr) {
            ++copy_failures;
            return;
        }
        _in_flight.push_back({at, to, copy});
    }

    // Packets due by `now` for engine `to`.
    std::vector<rte_mbuf*> arrivals(int to, common::time_ns now)
    {
        std::vector<rte_mbuf*> out;
        for (auto it = _in_flight.begin(); it != _in_flight.end();) {
            if (it->to == to && it->at <= now) {
                out.push_back(it->m);
                it = _in_flight.erase(it);
            } else {
                ++it;
            }
        }
        return out;
    }

    bool empty() const { return _in_flight.empty(); }
    void clear()
    {
        for (auto& f : _in_flight) {
            rte_pktmbuf_free(f.m);
        }
        _in_flight.clear();
    }

    std::map<tables::path_id, std::uint64_t> per_path;
    std::uint64_t dropped = 0;
    std::uint64_t copy_failures = 0;

private:
    struct flight {
        common::time_ns at;
        int to;
        rte_mbuf* m;
    };
    rte_mempool* _pool;
    std::map<tables::path_id, path> _paths;
    std::map<std::pair<tables::path_id, int>, common::time_ns> _busy_until;
    std::deque<flight> _in_flight;
};

} // namespace laps::test
