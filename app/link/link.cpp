#include "app/link/link.hpp"

#include "app/run/idle.hpp"
#include "app/ports/steering.hpp"
#include "wire/mbuf_parse.hpp"

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>

#include <algorithm>
#include <array>
#include <limits>

namespace laps::app {

namespace {
constexpr unsigned link_burst = 32;

// The heap's order: the earliest due first, then the first to arrive.
struct later_than {
    template <typename Held>
    bool operator()(const Held& a, const Held& b) const noexcept
    {
        return a.due != b.due ? a.due > b.due : a.order > b.order;
    }
};
constexpr later_than later;

// The outer IPv4 destination of a packet the engines did not build (a host
// frame passed through, an ARP), 0 if it has none.
std::uint32_t plain_ipv4_destination(const rte_mbuf* m) noexcept
{
    std::uint8_t head[sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr)];
    const auto* p = static_cast<const std::uint8_t*>(rte_pktmbuf_read(m, 0, sizeof head, head));
    if (p == nullptr || p[12] != 0x08 || p[13] != 0x00) {
        return 0;
    }
    const std::uint8_t* ip = p + sizeof(rte_ether_hdr) + offsetof(rte_ipv4_hdr, dst_addr);
    return std::uint32_t{ip[0]} << 24 | std::uint32_t{ip[1]} << 16 | std::uint32_t{ip[2]} << 8 | ip[3];
}
} // namespace

link::link(const link_config& config, std::vector<link_side> sides, const clock& clk, const std::atomic<bool>& stop,
           idle_mode idle)
    : _config(config), _side(std::move(sides)), _clock(clk), _stop(stop), _idle(idle), _rng(rte_rdtsc())
{
    _pool = make_pktmbuf_pool("link_pkt", "the link's copies, link.mbufs", _config.mbufs, 256,
                              RTE_MBUF_DEFAULT_BUF_SIZE, static_cast<int>(rte_socket_id()));
    _lane_of.assign(65536, 0);
    _lanes.resize(1 + _config.paths.size());
    _lanes[0].delay_cycles = _clock.cycles_for(_config.default_delay_ns);
    for (std::size_t i = 0; i < _config.paths.size(); ++i) {
        const link_path& p = _config.paths[i];
        lane& l = _lanes[1 + i];
        l.delay_cycles = _clock.cycles_for(p.delay_ns);
        l.jitter_cycles = _clock.cycles_for(p.jitter_ns);
        l.loss_threshold = p.loss >= 1.0 ? std::numeric_limits<std::uint64_t>::max()
                                         : static_cast<std::uint64_t>(p.loss * 0x1.0p64);
        _lane_of[p.pid] = static_cast<std::uint16_t>(1 + i);
    }
    // Every pair, both ways, shares a pid's queue: ring_size per sender.
    _lane_limit = static_cast<std::size_t>(_config.ring_size) * _side.size();
    for (auto& l : _lanes) {
        l.queue.reserve(_lane_limit);
    }
    _counters.assign(_side.size() * _side.size(), link_counters{});
    if (_config.rate_bps > 0) {
        _cycles_per_byte = 8.0 * static_cast<double>(_clock.hz()) / _config.rate_bps;
        _ports.resize(_side.size());
        for (auto& p : _ports) {
            p.slots.resize(_config.ring_size);
        }
    }
}

link::~link()
{
    clear();
}

void link::clear() noexcept
{
    for (auto& l : _lanes) {
        for (const held& h : l.queue) {
            rte_pktmbuf_free(h.m);
        }
        l.queue.clear();
    }
    for (auto& p : _ports) {
        for (; p.count > 0; --p.count) {
            rte_pktmbuf_free(p.slots[p.head].m);
            p.head = (p.head + 1) % p.slots.size();
        }
    }
}

int link::destination(std::size_t from, const rte_mbuf* m, const wire::parse_result& r) const noexcept
{
    const std::uint32_t ip = r.ok() ? r.packet.dst_ip : plain_ipv4_destination(m);
    for (std::size_t s = 0; s < _side.size(); ++s) {
        if (s != from && ip != 0 && _side[s].ip == ip) {
            return static_cast<int>(s);
        }
    }
    return _side.size() == 2 ? static_cast<int>(1 - from) : -1;
}

void link::take(std::size_t from) noexcept
{
    const link_side& side = _side[from];
    std::array<rte_mbuf*, link_burst> pkts;
    for (rte_ring* ring : side.tx) {
        const unsigned n = rte_ring_dequeue_burst(ring, reinterpret_cast<void**>(pkts.data()), link_burst, nullptr);
        // The delay counts from now, after the dequeue: a time read before
        // it would be old by however long this lcore was descheduled in
        // between, and packets would cross faster than their path's delay.
        const std::uint64_t now = n > 0 ? _clock.cycles() : 0;
        for (unsigned i = 0; i < n; ++i) {
            rte_mbuf* m = pkts[i];
            const wire::parse_result r = wire::parse(m, side.udp_port);
            const std::uint16_t lane_index = r.ok() ? _lane_of[r.packet.header.pid] : 0;
            const int to = destination(from, m, r);
            if (to < 0) {
                ++_drop_no_route;
                rte_pktmbuf_free(m);
                continue;
            }
            link_counters& c = pair(from, static_cast<std::size_t>(to));
            // A linear copy in the link's pool, as the receiving NIC would
            // write it; the sender's mbufs (and references) go back now.
            rte_mbuf* copy = rte_pktmbuf_copy(m, _pool.get(), 0, UINT32_MAX);
            rte_pktmbuf_free(m);
            if (copy == nullptr) {
                ++c.drop_no_mbuf;
                continue;
            }
            lane& l = _lanes[lane_index];
            if (l.loss_threshold != 0 && _rng() < l.loss_threshold) {
                ++c.drop_loss;
                rte_pktmbuf_free(copy);
                continue;
            }
            if (l.queue.size() == _lane_limit) {
                ++c.drop_full;
                rte_pktmbuf_free(copy);
                continue;
            }
            const std::uint64_t jitter = l.jitter_cycles == 0 ? 0 : _rng() % l.jitter_cycles;
            l.queue.push_back(held{now + l.delay_cycles + jitter, _arrivals++, copy, static_cast<std::uint16_t>(from),
                                   static_cast<std::uint16_t>(to)});
            std::push_heap(l.queue.begin(), l.queue.end(), later);
        }
    }
}

void link::hand_over(const held& h) noexcept
{
    const link_side& to = _side[h.to];
    link_counters& c = pair(h.from, h.to);
    const std::uint16_t w = fabric_owner(h.m, to.udp_port, to.tag_mask, to.workers, 0);
    if (rte_ring_enqueue(to.rx[w], h.m) != 0) {
        ++c.drop_full;
        rte_pktmbuf_free(h.m);
        return;
    }
    ++c.forwarded;
    ++_forwarded;
}

void link::deliver(std::uint64_t now) noexcept
{
    for (auto& l : _lanes) {
        while (!l.queue.empty() && l.queue.front().due <= now) {
            std::pop_heap(l.queue.begin(), l.queue.end(), later);
            const held h = l.queue.back();
            l.queue.pop_back();
            if (_ports.empty()) {
                hand_over(h);
                continue;
            }
            // Due at the receiving port: behind what it is still sending.
            port_queue& p = _ports[h.to];
            if (p.count == p.slots.size()) {
                ++pair(h.from, h.to).drop_port_full;
                rte_pktmbuf_free(h.m);
                continue;
            }
            p.slots[(p.head + p.count) % p.slots.size()] = h;
            ++p.count;
        }
    }
}

void link::serve_ports(std::uint64_t now) noexcept
{
    for (auto& p : _ports) {
        while (p.count > 0) {
            const held& h = p.slots[p.head];
            // The port starts a packet when it is due and the one before
            // has left; it is through one serialisation time later.
            const std::uint64_t start = std::max(p.free_at, h.due);
            const auto done =
                start + static_cast<std::uint64_t>(static_cast<double>(h.m->pkt_len) * _cycles_per_byte);
            if (done > now) {
                break;
            }
            p.free_at = done;
            hand_over(h);
            p.head = (p.head + 1) % p.slots.size();
            --p.count;
        }
    }
}

int link::run() noexcept
{
    idler idle(_idle);
    while (!_stop.load(std::memory_order_relaxed)) {
        const std::uint64_t before = _forwarded;
        for (std::size_t s = 0; s < _side.size(); ++s) {
            take(s);
        }
        const std::uint64_t now = _clock.cycles();
        deliver(now);
        serve_ports(now);
        idle.after(before != _forwarded);
    }
    return 0;
}

unsigned link::mbufs_in_use() const
{
    return rte_mempool_in_use_count(_pool.get());
}

std::string link::pool_name() const
{
    return _pool->name;
}

} // namespace laps::app
