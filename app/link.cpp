#include "app/link.hpp"

#include "app/steering.hpp"
#include "wire/mbuf_parse.hpp"

#include <rte_lcore.h>

#include <sched.h>

#include <array>

namespace laps::app {

namespace {
constexpr unsigned link_burst = 32;
} // namespace

link::link(const link_config& config, link_side a, link_side b, const clock& clk, const std::atomic<bool>& stop,
           idle_mode idle)
    : _config(config), _side{std::move(a), std::move(b)}, _clock(clk), _stop(stop), _idle(idle)
{
    _pool = make_pktmbuf_pool("link_pkt", "the link's copies, link.mbufs", _config.mbufs, 256,
                              RTE_MBUF_DEFAULT_BUF_SIZE, static_cast<int>(rte_socket_id()));
    _lane_of.assign(65536, 0);
    for (auto& d : _dir) {
        d.lanes.resize(1 + _config.paths.size());
        d.lanes[0].delay_cycles = _clock.cycles_for(_config.default_delay_ns);
        for (std::size_t i = 0; i < _config.paths.size(); ++i) {
            d.lanes[1 + i].delay_cycles = _clock.cycles_for(_config.paths[i].delay_ns);
        }
        for (auto& l : d.lanes) {
            l.fifo.assign(_config.ring_size, held{});
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
            while (l.count > 0) {
                rte_pktmbuf_free(l.fifo[l.head].m);
                l.head = (l.head + 1) % static_cast<std::uint32_t>(l.fifo.size());
                --l.count;
            }
        }
    }
}

void link::take(int dir, std::uint64_t now) noexcept
{
    const link_side& from = _side[dir];
    direction& d = _dir[dir];
    std::array<rte_mbuf*, link_burst> pkts;
    for (rte_ring* ring : from.tx) {
        const unsigned n = rte_ring_dequeue_burst(ring, reinterpret_cast<void**>(pkts.data()), link_burst, nullptr);
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
            const auto size = static_cast<std::uint32_t>(l.fifo.size());
            if (l.count == size) {
                ++d.counters.drop_full;
                rte_pktmbuf_free(copy);
                continue;
            }
            l.fifo[(l.head + l.count) % size] = held{now + l.delay_cycles, copy};
            ++l.count;
        }
    }
}

void link::deliver(int dir, std::uint64_t now) noexcept
{
    const link_side& to = _side[1 - dir];
    direction& d = _dir[dir];
    for (auto& l : d.lanes) {
        const auto size = static_cast<std::uint32_t>(l.fifo.size());
        while (l.count > 0 && l.fifo[l.head].due <= now) {
            rte_mbuf* m = l.fifo[l.head].m;
            l.head = (l.head + 1) % size;
            --l.count;
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
    while (!_stop.load(std::memory_order_relaxed)) {
        const std::uint64_t now = _clock.cycles();
        const std::uint64_t before = _dir[0].counters.forwarded + _dir[1].counters.forwarded;
        take(0, now);
        take(1, now);
        deliver(0, now);
        deliver(1, now);
        if (_idle == idle_mode::yield && before == _dir[0].counters.forwarded + _dir[1].counters.forwarded) {
            sched_yield();
        }
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
