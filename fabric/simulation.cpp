// Construction and teardown of a testbed run; the event loop is in
// fabric_loop.cpp, the hosts' side in host_loop.cpp.
#include "fabric/simulation.hpp"

#include "fabric/flow_generator.hpp"

#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <stdexcept>

namespace laps::fabric {

namespace {

std::atomic<std::uint32_t> next_run_id{0};

// Rate loads and ideal FCTs are relative to: the fastest link of the host (a
// rail GPU has NVLink and rail links of the same speed in the paper).
std::vector<double> host_rates(const topology::fabric& f)
{
    std::vector<double> rates(f.host_count(), 0.0);
    for (std::size_t h = 0; h < f.host_count(); ++h) {
        for (const auto& adj : f.neighbours(static_cast<topology::node_id>(h))) {
            rates[h] = std::max(rates[h], f.link_at(adj.link).rate_gbps * 1e9);
        }
    }
    return rates;
}

std::uint64_t resolve_seed(const scenario& s, const run_options& o)
{
    return o.seed.value_or(s.seed);
}

double resolve_scale(const scenario& s, const run_options& o)
{
    return o.scale.value_or(s.scale);
}

constexpr std::uint32_t default_flow_capacity = 256;
// Host frames and receive copies, unless fabric.memory_mb says otherwise.
// Engines may hold flow_queue + window frames per flow, far more than a
// fabric ever has in flight; a host that finds the pool empty waits (counted
// as frame_pool_waits), so the cap bounds memory, not correctness.
constexpr std::uint64_t pool_cap = 1u << 18;

std::uint32_t flow_capacity(const scenario& s)
{
    return s.flow_capacity_given ? s.algo.tables.flow_capacity : default_flow_capacity;
}

} // namespace

pool_plan simulation::plan(const scenario& s, const run_options& o)
{
    const auto& f = *s.topology;
    const auto flows = generate_flows(s, resolve_scale(s, o), resolve_seed(s, o), host_rates(f), o.load);
    const std::uint32_t frame_bytes = s.fabric.frame_bytes;
    std::vector<std::uint64_t> out(f.host_count(), 0);
    std::vector<std::uint64_t> in(f.host_count(), 0);
    std::uint64_t total_frames = 0;
    for (const auto& fl : flows) {
        ++out[fl.src];
        ++in[fl.dst];
        total_frames += frame_count(fl.bytes, frame_bytes);
    }
    if (uses_roce(s.scheme)) {
        // The RoCE NIC model sends packet records, not mbufs: minimal pools.
        pool_plan p;
        p.frame_room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + frame_bytes);
        p.wire_room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + frame_bytes + wire::max_overhead + 64);
        p.control_room = wire::header_mbuf_data_room;
        p.frames = 1024;
        p.wire = 1024;
        p.control = 1024;
        p.eal_memory_mb = 256;
        (void)total_frames;
        return p;
    }
    const std::uint64_t cap = flow_capacity(s);
    const std::uint64_t queue = s.engine.flow_queue_packets;
    const std::uint64_t window = s.algo.retransmit.window_packets;
    std::uint64_t frames = 0;
    std::uint64_t wire = 8192;
    for (std::size_t h = 0; h < f.host_count(); ++h) {
        frames += std::min(out[h], cap) * (queue + window);
        wire += std::min(in[h], cap) * (s.engine.in_order ? window : 8);
    }
    frames = std::min(frames, total_frames + 1024) + 1024;
    wire = std::min(wire, total_frames + 8192);
    pool_plan p;
    p.frame_room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + frame_bytes);
    p.wire_room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + frame_bytes + wire::max_overhead + 64);
    p.control_room = wire::header_mbuf_data_room;
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
    const std::uint64_t pool_bytes = p.frames * mbuf_footprint(p.frame_room) + p.wire * mbuf_footprint(p.wire_room) +
                                     p.control * mbuf_footprint(p.control_room);
    // rte_hash tables of the engines (send, receive, PST), ~256 bytes a slot.
    const std::uint64_t hash_bytes = f.host_count() * (2 * cap + f.host_count() + 64) * 256;
    p.eal_memory_mb = static_cast<std::uint32_t>(((pool_bytes + hash_bytes) * 5 / 4) >> 20) + 256;
    return p;
}

simulation::simulation(const scenario& s, const run_options& options)
    : _scenario(s), _seed(resolve_seed(s, options)), _scale(resolve_scale(s, options)), _options(options),
      _plan(plan(s, options)), _run_id(next_run_id++)
{
    const auto& f = *_scenario.topology;
    _routing = std::make_unique<topology::routing>(f);
    _forwarding = std::make_unique<forwarding>(f, *_routing);
    _host_rate_bps = host_rates(f);
    _max_time = static_cast<time_ns>(std::llround(static_cast<double>(_scenario.max_time_ns) * _scale));
    const auto& fp = _scenario.fabric;
    const std::uint64_t two_packets = 2 * (fp.frame_bytes + wire::max_overhead);
    _pfc_xon = fp.pfc_xon_bytes != 0 ? fp.pfc_xon_bytes
                                      : (fp.pfc_xoff_bytes > two_packets ? fp.pfc_xoff_bytes - two_packets : 0);

    const std::string prefix = "tb" + std::to_string(_run_id);
    _frame_pool = make_mbuf_pool(prefix + "_frames", _plan.frames, _plan.frame_room);
    _wire_pool = make_mbuf_pool(prefix + "_wire", _plan.wire, _plan.wire_room);
    _control_pool = make_mbuf_pool(prefix + "_ctl", _plan.control, _plan.control_room);

    build_ports();
    build_hosts();
    build_flows();
    const auto ecn = _scenario.fabric.ecn;
    // Marking by default where the hosts read it: the RoCE schemes, and the
    // LAPS engine under a policy that reads ECN echoes (REPS, FlowBender).
    _red = ecn == ecn_mode::on ||
           (ecn == ecn_mode::automatic &&
            (uses_roce(_scenario.scheme) || softmax::uses_ecn(_scenario.algo.selection.policy)));
    if (_red) {
        _red_rng.reserve(_ports.size());
        for (port_id p = 0; p < _ports.size(); ++p) {
            _red_rng.emplace_back(stream_seed(_seed, streams::red, p));
        }
    }
    if (uses_roce(_scenario.scheme)) {
        auto& rec = _scenario.roce.recovery;
        if (rec == loss_recovery::automatic) {
            // A spraying scheme needs out-of-order delivery whatever the flow control.
            rec = _scenario.fabric.pfc && !info(_scenario.scheme).reorders ? loss_recovery::go_back_n
                                                                            : loss_recovery::irn;
        }
        const auto tolerance = _scenario.roce.reorder_tolerance_packets;
        _reorder_tolerance = tolerance >= 0 ? static_cast<std::uint32_t>(tolerance)
                                            : (info(_scenario.scheme).reorders ? 64u : 0u);
        roce_setup();
    }

    // Faults first: at equal times they apply before anything else.
    _faults = _scenario.faults;
    for (std::uint32_t i = 0; i < _faults.size(); ++i) {
        _faults[i].at_ns = static_cast<time_ns>(std::llround(static_cast<double>(_faults[i].at_ns) * _scale));
        _events.push(_faults[i].at_ns, event_kind::fault, i);
    }
    if (!_flows.empty()) {
        _events.push(_flows.front().spec.start, event_kind::flow_start, 0);
    }
    for (const auto& h : _hosts) {
        if (h.engine) {
            _events.push(_scenario.engine.housekeeping_ns, event_kind::housekeeping, h.id);
        }
    }
    _burst.resize(64);
    _last_progress_wall = std::chrono::steady_clock::now();
}

void simulation::build_ports()
{
    const auto& f = *_scenario.topology;
    const auto& fp = _scenario.fabric;
    _nodes.resize(f.node_count());
    for (topology::node_id n = 0; n < f.node_count(); ++n) {
        auto& node = _nodes[n];
        node.is_host = f.is_host(n);
        node.shared_limit = node.is_host ? 0 : fp.shared_buffer_bytes;
        node.ecmp_salt = static_cast<std::uint32_t>(stream_seed(_seed, streams::ecmp, n));
        for (const auto& adj : f.neighbours(n)) {
            node.ports.push_back(port_of(adj.link, f.link_at(adj.link).a != n));
        }
    }
    _ports.resize(2 * f.link_count());
    for (topology::link_id l = 0; l < f.link_count(); ++l) {
        const auto& link = f.link_at(l);
        for (int dir = 0; dir < 2; ++dir) {
            auto& p = _ports[port_of(l, dir == 1)];
            p.link = l;
            p.from = dir == 0 ? link.a : link.b;
            p.to = dir == 0 ? link.b : link.a;
            p.rate_bps = link.rate_gbps * 1e9;
            p.delay_ns = link.delay_ns;
            p.queue = port_queue(f.is_host(p.from) ? fp.host_queue_bytes : fp.port_queue_bytes);
            p.rng = common::rng(stream_seed(_seed, streams::link_loss, port_of(l, dir == 1)));
        }
    }
}

pipeline::engine_config simulation::engine_config_for(const host_nic& h) const
{
    const auto& s = _scenario;
    pipeline::engine_config c;
    c.name = "tb" + std::to_string(_run_id) + "_" + std::to_string(h.id);
    c.algo = s.algo;
    c.algo.paths = h.table;
    // Each engine its own stream, all from the one seed.
    c.algo.selection.seed = stream_seed(_seed ^ s.algo.selection.seed, streams::engine, h.id);
    if (!s.rate_cap_given) {
        c.algo.congestion.aimd.cap_bps = h.rate_bps;
        c.algo.congestion.aimd.floor_bps = std::min(c.algo.congestion.aimd.floor_bps, h.rate_bps);
    }
    // Lossless: a pause holds a path's packets far longer than 2 x realVal and
    // each early timeout resends the path's whole window (issue 20,
    // docs/congestion.md "Timeouts under PFC"). Losses are rare there and ACK
    // gaps find most of them; the NICs it is compared with wait as long.
    c.algo.retransmit.min_timeout_ns = path_timeout_floor(s);
    c.algo.tables.flow_capacity = flow_capacity(s);
    c.algo.tables.pst_capacity = std::max<std::uint32_t>(8, static_cast<std::uint32_t>(h.table.pst.size()));
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
    c.flow_queue_packets = s.engine.flow_queue_packets;
    c.flow_idle_ns = s.engine.flow_idle_ns;
    c.poll_budget = s.engine.poll_budget;
    // The pools are sized for the scenario's worst case: holding for order
    // may take all of it (the cap protects a real port's pool from a peer).
    c.reorder_hold_max = static_cast<std::uint32_t>(std::min<std::uint64_t>(_plan.frames, UINT32_MAX));
    // The NIC's rate limiter: all of a host's flows together at its link rate.
    c.port_rate_bps = h.rate_bps;
    c.control_pool = _control_pool.get();
    return c;
}

void simulation::build_hosts()
{
    const auto& f = *_scenario.topology;
    const std::size_t n = f.host_count();
    topology::delay_options delays;
    delays.packet_bytes = _scenario.algo.baseval.packet_bytes;
    delays.margin = _scenario.algo.baseval.margin_per == config::margin_unit::per_switch
                        ? topology::margin_mode::per_switch
                        : topology::margin_mode::per_link;
    delays.margin_packets = _scenario.algo.baseval.margin_packets;
    const topology::path_planner planner(*_routing, _scenario.paths, delays);

    _hosts.resize(n);
    std::vector<topology::node_id> all(n);
    for (std::size_t h = 0; h < n; ++h) {
        all[h] = static_cast<topology::node_id>(h);
    }
    // TBB: one table per host, each written by exactly one task.
    planner.for_each_table(all, [this](topology::node_id h, const tables::table_spec& spec) {
        _hosts[h].table = spec;
    });

    common::rng clocks(stream_seed(_seed, streams::clocks));
    const auto& cp = _scenario.clocks;
    for (std::size_t i = 0; i < n; ++i) {
        auto& h = _hosts[i];
        h.id = static_cast<topology::node_id>(i);
        h.ipv4 = f.address_of(h.id).ipv4_host_order();
        h.rate_bps = _host_rate_bps[i];
        time_ns offset = 0;
        if (cp.offset_max_ns > 0) {
            const auto span = static_cast<std::uint64_t>(2 * cp.offset_max_ns + 1);
            offset = static_cast<time_ns>(clocks() % span) - cp.offset_max_ns;
        }
        h.clock_offset_ns = cp.epoch_ns + offset;
        if (cp.drift_max_ppm > 0) {
            // Uniform in [-max, +max] from the same stream, after the offset.
            const double unit = static_cast<double>(clocks() >> 11) * 0x1.0p-53;
            h.drift_ppm = (2.0 * unit - 1.0) * cp.drift_max_ppm;
        }
        for (const auto& st : cp.steps) {
            if (st.host == h.id) {
                h.clock_steps.push_back({st.at_ns, st.step_ns});
            }
        }
        std::sort(h.clock_steps.begin(), h.clock_steps.end(),
                  [](const auto& a, const auto& b) { return a.at < b.at; });
        _host_by_ip.emplace(h.ipv4, h.id);
    }
    if (uses_roce(_scenario.scheme)) {
        return; // RoCE NICs instead of engines (roce_loop.cpp); the tables give the candidate paths
    }
    for (auto& h : _hosts) {
        h.engine = std::make_unique<pipeline::engine>(engine_config_for(h));
    }
}

void simulation::build_flows()
{
    const auto specs = generate_flows(_scenario, _scale, _seed, _host_rate_bps, _options.load);
    const auto& f = *_scenario.topology;
    const std::uint32_t frame_bytes = _scenario.fabric.frame_bytes;
    // Per pair: the shortest path's links, for the ideal FCT.
    std::map<std::pair<topology::node_id, topology::node_id>, std::vector<topology::link_id>> paths;
    _flows.resize(specs.size());
    for (std::uint32_t i = 0; i < specs.size(); ++i) {
        auto& fl = _flows[i];
        fl.id = i;
        fl.spec = specs[i];
        fl.frames = frame_count(fl.spec.bytes, frame_bytes);
        const std::uint32_t full = frame_length(fl.spec.bytes, frame_bytes, 0);
        const std::uint32_t last = frame_length(fl.spec.bytes, frame_bytes, fl.frames - 1);
        fl.wire_bytes = static_cast<std::uint64_t>(full) * (fl.frames - 1) + last;
        fl.seen.assign((fl.frames + 63) / 64, 0);
        _bytes_offered += fl.spec.bytes;

        auto [it, fresh] = paths.try_emplace({fl.spec.src, fl.spec.dst});
        if (fresh) {
            const auto nodes = _routing->shortest_path(fl.spec.src, fl.spec.dst);
            for (std::size_t k = 1; k < nodes.size(); ++k) {
                it->second.push_back(*f.link_between(nodes[k - 1], nodes[k]));
            }
        }
        // Ideal: every byte at the host's rate, then the last frame's
        // propagation and store-and-forward over the rest of the path.
        time_ns ideal = common::serialization_ns(fl.wire_bytes, _host_rate_bps[fl.spec.src]);
        for (std::size_t k = 0; k < it->second.size(); ++k) {
            const auto& link = f.link_at(it->second[k]);
            ideal += link.delay_ns;
            if (k > 0) {
                ideal += common::serialization_ns(last, link.rate_gbps * 1e9);
            }
        }
        fl.ideal_ns = ideal;
    }
}

simulation::~simulation()
{
    release();
}

std::vector<pool_usage> simulation::release()
{
    if (!_released) {
        _released = true;
        // Packets in the fabric: queued, being serialised, on the wire.
        for (auto& p : _ports) {
            p.queue.flush(_packets, [this](std::uint32_t i) {
                rte_pktmbuf_free(_packets[i].m);
                _packets.release(i);
            });
            if (p.busy) {
                rte_pktmbuf_free(_packets[p.in_service].m);
                _packets.release(p.in_service);
                p.busy = false;
            }
        }
        for (const auto& e : _events.pending()) {
            if (e.kind == event_kind::arrival) {
                rte_pktmbuf_free(_packets[e.target].m);
                _packets.release(e.target);
            }
        }
        for (auto& rx : _cw_rx) {
            for (const auto i : rx.voq) {
                _packets.release(i); // RoCE records: no mbuf
            }
            rx.voq.clear();
        }
        _events.clear();
        for (auto& h : _hosts) {
            h.engine.reset(); // frees what it holds: queues, windows, reorder buffers, staging
        }
    }
    std::vector<pool_usage> out;
    for (auto* pool : {_frame_pool.get(), _wire_pool.get(), _control_pool.get()}) {
        if (pool != nullptr) {
            out.push_back({pool->name, pool->size, rte_mempool_in_use_count(pool)});
        }
    }
    return out;
}

time_ns simulation::end_time() const noexcept
{
    return _completed == _flows.size() ? _last_completion : _now;
}

bool simulation::done() const noexcept
{
    return _completed == _flows.size() && _packets.live() == 0;
}

} // namespace laps::fabric
