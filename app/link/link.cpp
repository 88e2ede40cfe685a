#include "app/link/link.hpp"

#include "app/run/idle.hpp"
#include "app/ports/steering.hpp"
#include "wire/mbuf_parse.hpp"

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
} // namespace

link::link(const link_config& config, link_side a, link_side b, const clock& clk, const std::atomic<bool>& stop,
           idle_mode idle)
    : _config(config), _side{std::move(a), std::move(b)}, _clock(clk), _stop(stop), _idle(idle),
      _rng(rte_rdtsc())
{
    _pool = make_pktmbuf_pool("link_pkt", "the link's copies, link.mbufs", _config.mbufs, 256,
                              RTE_MBUF_DEFAULT_BUF_SIZE, static_cast<int>(rte_socket_id()));
    _lane_of.assign(65536, 0);
    for (auto& d : _dir) {
        d.lanes.resize(1 + _config.paths.size());
        d.lanes[0].delay_cycles = _clock.cycles_for(_config.default_delay_ns);
        for (std::size_t i = 0; i < _config.paths.size(); ++i) {
            const link_path& p = _config.paths[i];
            lane& l = d.lanes[1 + i];
            l.delay_cycles = _clock.cycles_for(p.delay_ns);
            l.jitter_cycles = _clock.cycles_for(p.jitter_ns);
            l.loss_threshold = p.loss >= 1.0 ? std::numeric_limits<std::uint64_t>::max()
                                             : static_cast<std::uint64_t>(p.loss * 0x1.0p64);
        }
        for (auto& l : d.lanes) {
            l.queue.reserve(_config.ring_size);
        }
    }
    for (std::size_t i = 0; i < _config.paths.size(); ++i) {
        _lane_of[_config.paths[i].pid] = static_cast<std::uint16_t>(1 + i);
    }
}

link::~link()
{
    clear();
}

void link::clear() noexcept
{
    for (auto& d : _dir) {
        for (auto& l : d.lanes) {
            for (const held& h : l.queue) {
                rte_pktmbuf_free(h.m);
            }
            l.queue.clear();
        }
    }
}

void link::take(int dir) noexcept
{
    const link_side& from = _side[dir];
    direction& d = _dir[dir];
    std::array<rte_mbuf*, link_burst> pkts;
    for (rte_ring* ring : from.tx) {
        const unsigned n = rte_ring_dequeue_burst(ring, reinterpret_cast<void**>(pkts.data()), link_burst, nullptr);
        // The delay counts from now, after the dequeue: a time read before
        // it would be old by however long this lcore was descheduled in
        // between, and packets would cross faster than their path's delay.
        const std::uint64_t now = n > 0 ? _clock.cycles() : 0;
        for (unsigned i = 0; i < n; ++i) {
            rte_mbuf* m = pkts[i];
            std::uint16_t lane_index = 0;
            const wire::parse_result r = wire::parse(m, from.udp_port);
            if (r.ok()) {
                lane_index = _lane_of[r.packet.header.pid];
            }
            // A linear copy in the link's pool, as the receiving NIC would
            // write it; the sender's mbufs (and references) go back now.
            rte_mbuf* copy = rte_pktmbuf_copy(m, _pool.get(), 0, UINT32_MAX);
            rte_pktmbuf_free(m);
            if (copy == nullptr) {
                ++d.counters.drop_no_mbuf;
                continue;
            }
            lane& l = d.lanes[lane_index];
            if (l.loss_threshold != 0 && _rng() < l.loss_threshold) {
                ++d.counters.drop_loss;
                rte_pktmbuf_free(copy);
                continue;
            }
            if (l.queue.size() == _config.ring_size) {
                ++d.counters.drop_full;
                rte_pktmbuf_free(copy);
                continue;
            }
            const std::uint64_t jitter = l.jitter_cycles == 0 ? 0 : _rng() % l.jitter_cycles;
            l.queue.push_back(held{now + l.delay_cycles + jitter, _arrivals++, copy});
            std::push_heap(l.queue.begin(), l.queue.end(), later);
        }
    }
}

void link::deliver(int dir, std::uint64_t now) noexcept
{
    const link_side& to = _side[1 - dir];
    direction& d = _dir[dir];
    for (auto& l : d.lanes) {
        while (!l.queue.empty() && l.queue.front().due <= now) {
            std::pop_heap(l.queue.begin(), l.queue.end(), later);
            rte_mbuf* m = l.queue.back().m;
            l.queue.pop_back();
            const std::uint16_t w = fabric_owner(m, to.udp_port, to.tag_mask, to.workers, 0);
            if (rte_ring_enqueue(to.rx[w], m) != 0) {
                ++d.counters.drop_full;
                rte_pktmbuf_free(m);
                continue;
            }
            ++d.counters.forwarded;
        }
    }
}

int link::run() noexcept
{
    idler idle(_idle);
    while (!_stop.load(std::memory_order_relaxed)) {
        const std::uint64_t before = _dir[0].counters.forwarded + _dir[1].counters.forwarded;
        take(0);
        take(1);
        const std::uint64_t now = _clock.cycles();
        deliver(0, now);
        deliver(1, now);
        idle.after(before != _dir[0].counters.forwarded + _dir[1].counters.forwarded);
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
