// The LAPS engines of a run: their configuration from the scenario and the
// host, the mbuf pools they need, and their teardown.
#include "fabric/frames.hpp"
#include "fabric/flow_generator.hpp"
#include "fabric/hosts/laps_hosts.hpp"
#include "softmax/policy.hpp"

#include <rte_memzone.h>

#include <algorithm>
#include <new>
#include <stdexcept>
#include <string>

namespace laps::fabric::hosts {

namespace {

constexpr std::uint32_t default_flow_capacity = 256;
// Host frames and receive copies, unless fabric.memory_mb says otherwise.
// Engines may hold flow_queue + window frames per flow, far more than a
// fabric ever has in flight; a host that finds the pool empty waits (counted
// as frame_pool_waits), so the cap bounds memory, not correctness.
constexpr std::uint64_t pool_cap = 1u << 18;

std::uint32_t memzones_in_use() noexcept
{
    std::uint32_t n = 0;
    rte_memzone_walk([](const rte_memzone*, void* count) { ++*static_cast<std::uint32_t*>(count); }, &n);
    return n;
}

// An engine without its flow slots (docs/testbed.md "Memory and scale":
// staging, per-pid arrays, header templates, counters).
constexpr std::uint64_t engine_model_bytes = 110 << 10;

// A host's PST rows: its destinations (at least the 8 a PST takes).
std::uint32_t pst_capacity(const host_info& h) noexcept
{
    return std::max<std::uint32_t>(8, static_cast<std::uint32_t>(h.table.pst.size()));
}

} // namespace

std::uint32_t laps_hosts::flow_capacity(const scenario& s) noexcept
{
    return s.flow_capacity_given ? s.algo.tables.flow_capacity : default_flow_capacity;
}

pool_plan laps_hosts::plan(const scenario& s, const std::vector<flow_spec>& flows)
{
    const auto& f = *s.topology;
    const std::uint32_t frame_bytes = s.fabric.frame_bytes;
    std::vector<std::uint64_t> out(f.host_count(), 0);
    std::vector<std::uint64_t> in(f.host_count(), 0);
    std::uint64_t total_frames = 0;
    for (const auto& fl : flows) {
        ++out[fl.src];
        ++in[fl.dst];
        total_frames += frame_count(fl.bytes, frame_bytes);
    }
    const std::uint64_t cap = flow_capacity(s);
    const std::uint64_t queue = s.engine.flow_queue_packets;
    const std::uint64_t window = s.algo.retransmit.window_packets;
    std::uint64_t frames = 0;
    std::uint64_t wire = 8192;
    // rte_hash slots of the engines (send and receive flows, PST rows; ~256
    // bytes each), only on hosts with flows (laps_hosts()).
    std::uint64_t hash_slots = 0;
    for (std::size_t h = 0; h < f.host_count(); ++h) {
        frames += std::min(out[h], cap) * (queue + window);
        wire += std::min(in[h], cap) * (s.engine.in_order ? window : 8);
        if (out[h] + in[h] > 0) {
            hash_slots += std::min(out[h], cap) + std::min(in[h], cap) + out[h] + 64;
        }
    }
    frames = std::min(frames, total_frames + 1024) + 1024;
    wire = std::min(wire, total_frames + 8192);
    pool_plan p;
    p.frame_room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + frame_bytes);
    p.wire_room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + frame_bytes + wire::max_overhead + 64);
    p.control_room = s.engine.acks == pipeline::ack_mode::coalesced ? wire::coalescing_mbuf_data_room
                                                                    : wire::header_mbuf_data_room;
    if (s.fabric.memory_mb != 0) {
        // Frames and copies share the budget in proportion to their need.
        const double budget = static_cast<double>(s.fabric.memory_mb) * (1 << 20);
        const double need = static_cast<double>(frames * (mbuf_footprint(p.frame_room) +
                                                          3 * mbuf_footprint(p.control_room)) +
                                                wire * mbuf_footprint(p.wire_room));
        const double shrink = std::min(1.0, budget / need);
        frames = static_cast<std::uint64_t>(static_cast<double>(frames) * shrink);
        wire = static_cast<std::uint64_t>(static_cast<double>(wire) * shrink);
    } else {
        frames = std::min(frames, pool_cap);
        wire = std::min(wire, pool_cap);
    }
    p.frames = static_cast<std::uint32_t>(std::max<std::uint64_t>(frames, 4096));
    p.wire = static_cast<std::uint32_t>(std::max<std::uint64_t>(wire, 4096));
    // Header segments and ACKs: never short, or the engine would drop a host
    // frame it cannot encapsulate. At most every frame in flight twice (a
    // resend while the original is still queued), plus ACKs and probes.
    p.control = 3 * p.frames + 65536;
    const std::uint64_t hash_bytes = hash_slots * 256;
    // The pools map their own memory; the EAL holds their rings (a pointer
    // per mbuf, rounded up to a power of two) and the shared tables.
    const std::uint64_t ring_bytes = (std::uint64_t{p.frames} + p.wire + p.control) * 16;
    p.eal_memory_mb = static_cast<std::uint32_t>(((hash_bytes * 5 / 4) + ring_bytes) >> 20) + 256;
    // docs/testbed.md "Memory and scale": an engine per host with flows, a
    // send slot (flow state, window entries, queue) per flow it sends, a
    // receive slot (state, duplicate bits, reorder entries) per flow it
    // receives.
    std::uint64_t engines = 0;
    std::uint64_t send_slots = 0;
    std::uint64_t receive_slots = 0;
    for (std::size_t h = 0; h < f.host_count(); ++h) {
        engines += out[h] + in[h] > 0 ? 1 : 0;
        send_slots += std::min(out[h], cap);
        receive_slots += std::min(in[h], cap);
    }
    const std::uint64_t send_slot =
        sizeof(pipeline::send_flow) + retransmit::sender_window::bytes_per_packet * window + sizeof(rte_mbuf*) * queue;
    const std::uint64_t receive_slot = sizeof(pipeline::receive_flow) + window / 8 + 8 * window;
    p.engine_bytes = engines * engine_model_bytes + send_slots * send_slot + receive_slots * receive_slot;
    return p;
}

laps_hosts::laps_hosts(simulation& sim) : _sim(sim)
{
    if (sim.config().engine.rx_burst_ns > 0) {
        _rx_time.emplace();
    }
    const auto& hosts = sim.hosts();
    _hosts.resize(hosts.size());
    _first_ip = hosts.empty() ? 0 : hosts.front().ipv4;
    _ips_in_order = true;
    for (const auto& h : hosts) {
        _by_ip.emplace(h.ipv4, h.id);
        _ips_in_order = _ips_in_order && h.ipv4 - _first_ip == h.id;
    }
    for (const auto& f : sim.flows()) {
        ++_hosts[f.spec.src].sends;
        ++_hosts[f.spec.dst].receives;
    }
    const std::uint32_t cap = flow_capacity(sim.config());
    std::uint64_t send_slots = 0;
    std::uint64_t receive_slots = 0;
    std::uint64_t destination_rows = 0;
    for (const auto& h : hosts) {
        auto& e = _hosts[h.id];
        if (e.has_flows()) {
            // Both sides get a slot at least: an engine has both.
            e.sends = std::clamp(e.sends, 1u, cap);
            e.receives = std::clamp(e.receives, 1u, cap);
            send_slots += e.sends;
            receive_slots += e.receives;
            destination_rows += pst_capacity(h);
        }
    }
    _flow_index = std::make_unique<pipeline::flow_index>(
        "tb" + std::to_string(sim.setup().id), static_cast<std::uint32_t>(send_slots),
        static_cast<std::uint32_t>(receive_slots), static_cast<std::uint32_t>(destination_rows), SOCKET_ID_ANY);
    std::uint32_t engines = 0;
    for (const auto& e : _hosts) {
        engines += e.has_flows() ? 1 : 0;
    }
    std::uint32_t made = 0;
    for (const auto& h : hosts) {
        if (!_hosts[h.id].has_flows()) {
            continue;
        }
        const std::uint32_t before = memzones_in_use();
        // In the arena: should the constructor throw, its bytes stay there
        // until the hosts go, as every engine's do.
        void* place = _engine_memory.allocate(sizeof(pipeline::engine), alignof(pipeline::engine));
        _hosts[h.id].engine.reset(new (place) pipeline::engine(engine_config_for(h)));
        if (++made == 2) {
            // DPDK has a fixed number of memzones: should an engine take any
            // of its own (its tables are shared: flow_index), refuse now, with
            // the numbers, rather than fail a thousand engines in. (The second
            // engine: the first also registers the process's mbuf fields.)
            const std::uint32_t each = memzones_in_use() - before;
            const std::uint64_t needed = static_cast<std::uint64_t>(each) * (engines - 2) + memzones_in_use();
            if (needed > RTE_MAX_MEMZONE) {
                throw std::runtime_error(
                    "scenario: " + std::to_string(engines) + " hosts have flows and each runs a LAPS engine of " +
                    std::to_string(each) + " memzones: " + std::to_string(needed) +
                    " memzones in all, above this DPDK build's RTE_MAX_MEMZONE (" + std::to_string(RTE_MAX_MEMZONE) +
                    "). Give fewer hosts traffic, or run a RoCE scheme (docs/testbed.md, \"Memory and scale\")");
            }
        }
    }
    _burst.resize(64);
}

const pipeline::engine& laps_hosts::engine(topology::node_id h) const
{
    const auto& e = _hosts.at(h);
    if (e.engine == nullptr) {
        throw std::logic_error("laps_hosts::engine: host " + std::to_string(h) + " has no flows, so no engine");
    }
    return *e.engine;
}

std::span<const std::uint64_t> laps_hosts::packets_per_path(topology::node_id h) const
{
    const auto& e = _hosts.at(h);
    return e.engine != nullptr ? e.engine->packets_per_path() : std::span<const std::uint64_t>{};
}

pipeline::engine_config laps_hosts::engine_config_for(const host_info& h) const
{
    const auto& s = _sim.config();
    pipeline::engine_config c;
    c.name = "tb" + std::to_string(_sim.setup().id) + "_" + std::to_string(h.id);
    c.algo = s.algo;
    c.algo.paths = h.table;
    // Each engine its own stream, all from the one seed.
    c.algo.selection.seed = stream_seed(_sim.seed() ^ s.algo.selection.seed, streams::engine, h.id);
    if (!s.rate_cap_given) {
        c.algo.congestion.aimd.cap_bps = h.rate_bps;
        c.algo.congestion.aimd.floor_bps = std::min(c.algo.congestion.aimd.floor_bps, h.rate_bps);
    }
    // Lossless: a pause holds a path's packets far longer than 2 x realVal and
    // each early timeout resends the path's whole window (docs/congestion.md,
    // "Timeouts under PFC"). Losses are rare there and ACK gaps find most of
    // them; the NICs it is compared with wait as long.
    c.algo.retransmit.min_timeout_ns = path_timeout_floor(s);
    // Slots for its own flows only (sized in the constructor).
    c.algo.tables.flow_capacity = _hosts[h.id].sends;
    c.receive_flow_capacity = _hosts[h.id].receives;
    c.shared_flows = _flow_index.get();
    c.flow_index_tag = h.id + 1;
    c.algo.tables.pst_capacity = pst_capacity(h);
    std::uint32_t pids = 1;
    for (const auto& row : h.table.pit) {
        pids = std::max<std::uint32_t>(pids, row.pid + 1u);
    }
    c.algo.tables.pit_capacity = pids;
    c.outer.own_ip = h.ipv4;
    c.outer.own_mac = {0x02, 0x4c, static_cast<std::uint8_t>(h.ipv4 >> 16), static_cast<std::uint8_t>(h.ipv4 >> 8),
                       static_cast<std::uint8_t>(h.ipv4), 1};
    c.outer.next_hop_mac = {0x02, 0x4c, 0, 0, 0, 0xfe};
    // Room for the largest host frame plus LAPS's 86 bytes (docs/pipeline.md, MTU sizing).
    c.outer.mtu = static_cast<std::uint16_t>(std::max<std::uint32_t>(1500, s.fabric.frame_bytes + wire::max_overhead));
    c.algo.congestion.pacer_burst_bytes =
        std::max<std::uint32_t>(c.algo.congestion.pacer_burst_bytes, c.outer.mtu + wire::ether_size);
    c.in_order = s.engine.in_order;
    c.acks = s.engine.acks;
    // Receive bursts (engine.rx_burst_us): each packet keeps the time it
    // arrived, as a NIC's receive timestamp would (its latency is not the
    // burst's wait).
    c.rx_timestamps = s.engine.rx_burst_ns > 0;
    c.flow_queue_packets = s.engine.flow_queue_packets;
    c.flow_idle_ns = s.engine.flow_idle_ns;
    c.poll_budget = s.engine.poll_budget;
    // The pools are sized for the scenario's worst case: holding for order
    // may take all of it (the cap protects a real port's pool from a peer).
    c.reorder_hold_max = static_cast<std::uint32_t>(std::min<std::uint64_t>(_sim.pools().frames, UINT32_MAX));
    // The NIC's rate limiter: all of a host's flows together at its link rate.
    c.port_rate_bps = h.rate_bps;
    // Receiver-paced credits fill the host's downlink: each of its ports
    // (laps_hosts::deliver names them in the mbuf).
    if (c.algo.congestion.aimd.credit.downlink_bps <= 0) {
        double downlink_bps = 0;
        for (const auto& adj : _sim.topology().neighbours(h.id)) {
            downlink_bps += _sim.topology().link_at(adj.link).rate_gbps * 1e9;
        }
        c.algo.congestion.aimd.credit.downlink_bps = downlink_bps;
        c.algo.congestion.aimd.credit.ports = static_cast<std::uint32_t>(std::clamp<std::size_t>(
            _sim.topology().neighbours(h.id).size(), 1, congestion::max_credit_ports));
    }
    // Unless the scenario says: lossless where the fabric runs PFC.
    if (!c.algo.congestion.aimd.credit.lossless_fabric) {
        c.algo.congestion.aimd.credit.lossless_fabric = s.fabric.pfc;
    }
    c.control_pool = _sim.mempools().control.get();
    c.memory = &_engine_memory;
    return c;
}

bool laps_hosts::reads_ecn() const noexcept
{
    // Policies that read ECN echoes (REPS, FlowBender) want the fabric to mark.
    return softmax::uses_ecn(_sim.config().algo.selection.policy);
}

void laps_hosts::release()
{
    for (auto& e : _hosts) {
        for (rte_mbuf* m : e.arrived) { // a run that ended with a burst still due
            rte_pktmbuf_free(m);
        }
        e.arrived.clear();
        e.engine.reset(); // frees what it holds: queues, windows, reorder buffers, staging
    }
}

} // namespace laps::fabric::hosts
