// Construction and teardown of a testbed run, and its event loop; ports and
// links are in fabric_loop.cpp, the RoCE model's forwarding in
// roce_switching.cpp, the hosts in fabric/hosts/, the schemes in fabric/schemes/.
#include "fabric/simulation.hpp"

#include "fabric/flow_generator.hpp"
#include "fabric/frames.hpp"
#include "fabric/hosts/laps_hosts.hpp"
#include "fabric/hosts/roce_hosts.hpp"
#include "fabric/schemes/scheme.hpp"
#include "wire/layout.hpp"

#include <rte_mbuf.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cmath>
#include <map>
#include <stdexcept>

namespace laps::fabric {

namespace {

std::atomic<std::uint32_t> next_run_id{0};

// How far ahead in its lane the event loop prefetches an event's records,
// then what they point to (simulation::prefetch_for).
constexpr std::size_t prefetch_far = 8;
constexpr std::size_t prefetch_near = 4;

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

// An idle fabric's FCT (results.hpp "Ideal FCT"): `bytes` at the sender's
// `rate_bps`, then the last packet's (`last_bytes`) propagation and
// store-and-forward over the rest of the shortest path `links`.
time_ns ideal_over(const topology::fabric& f, const std::vector<topology::link_id>& links, double rate_bps,
                   std::uint64_t bytes, std::uint32_t last_bytes)
{
    time_ns ideal = common::serialization_ns(bytes, rate_bps);
    for (std::size_t k = 0; k < links.size(); ++k) {
        const auto& link = f.link_at(links[k]);
        ideal += link.delay_ns;
        if (k > 0) {
            ideal += common::serialization_ns(last_bytes, link.rate_gbps * 1e9);
        }
    }
    return ideal;
}

std::uint64_t resolve_seed(const scenario& s, const run_options& o)
{
    return o.seed.value_or(s.seed);
}

double resolve_scale(const scenario& s, const run_options& o)
{
    return o.scale.value_or(s.scale);
}

bool runs_engines(const scenario& s)
{
    return s.scheme->hosts == schemes::transport::laps_engine;
}

} // namespace

pool_plan simulation::plan(const scenario& s, const run_options& o)
{
    const auto flows =
        generate_flows(s, resolve_scale(s, o), resolve_seed(s, o), host_rates(*s.topology), o.load);
    pool_plan p = runs_engines(s) ? hosts::laps_hosts::plan(s, flows) : hosts::roce_hosts::plan(s);
    // Forwarding's rows (4 B per node each), at most: next hops toward each
    // destination and each switch (an anchor), ECMP groups at every node
    // (hosts send plain packets and the RoCE model's ACKs through them too).
    const auto& f = *s.topology;
    std::vector<bool> destination(f.host_count(), false);
    std::uint64_t rows = 2 * f.node_count() - f.host_count();
    for (const auto& fl : flows) {
        rows += destination[fl.dst] ? 0 : 1;
        destination[fl.dst] = true;
    }
    p.forwarding_bytes = rows * f.node_count() * 4;
    return p;
}

void check_fits(const pool_plan& plan, std::uint64_t limit_bytes)
{
    if (limit_bytes == 0) {
        limit_bytes = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(sysconf(_SC_PAGE_SIZE));
    }
    if (plan.model_bytes() <= limit_bytes) {
        return;
    }
    const auto mb = [](std::uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20); };
    throw std::runtime_error("scenario: may need " + mb(plan.model_bytes()) + " MB (mbuf pools and tables " +
                             mb(plan.pools_and_tables_bytes()) + " MB, LAPS engines and their flow slots " +
                             mb(plan.engine_bytes) + " MB, forwarding rows " + mb(plan.forwarding_bytes) +
                             " MB), above this machine's " + mb(limit_bytes) +
                             " MB. Give fewer hosts traffic, lower tables.flow_capacity or set fabric.memory_mb "
                             "(docs/testbed.md, \"Memory and scale\")");
}

simulation::simulation(const scenario& s, const run_options& options)
    : _scenario(s), _options(options), _plan(plan(s, options))
{
    _run.seed = resolve_seed(s, options);
    _run.scale = resolve_scale(s, options);
    _run.id = next_run_id++;
    const auto& f = *_scenario.topology;
    _routing = std::make_unique<topology::routing>(f);
    _forwarding = std::make_unique<forwarding>(f, *_routing);
    _run.max_time = static_cast<time_ns>(std::llround(static_cast<double>(_scenario.max_time_ns) * _run.scale));
    const auto& fp = _scenario.fabric;
    const std::uint64_t two_packets = 2 * (fp.frame_bytes + wire::max_overhead);
    _run.pfc_xon = fp.pfc_xon_bytes != 0 ? fp.pfc_xon_bytes
                                          : (fp.pfc_xoff_bytes > two_packets ? fp.pfc_xoff_bytes - two_packets : 0);

    const std::string prefix = "tb" + std::to_string(_run.id);
    _pools.frames = make_mbuf_pool(prefix + "_frames", _plan.frames, _plan.frame_room);
    _pools.wire = make_mbuf_pool(prefix + "_wire", _plan.wire, _plan.wire_room);
    _pools.control = make_mbuf_pool(prefix + "_ctl", _plan.control, _plan.control_room);

    build_ports();
    // The flows first: hosts get tables (and engines) for the pairs that talk.
    build_flows();
    build_hosts();
    _candidates = std::make_unique<candidate_catalog>(f, _hosts, *_forwarding, _ports);
    if (runs_engines(_scenario)) {
        _transport = std::make_unique<hosts::laps_hosts>(*this);
    } else {
        auto roce = std::make_unique<hosts::roce_hosts>(*this);
        _roce = roce.get();
        _transport = std::move(roce);
    }
    // Marking by default where the hosts read it: the RoCE NICs, and the
    // LAPS engine under a policy that reads ECN echoes (REPS, FlowBender).
    const auto ecn = _scenario.fabric.ecn;
    if (ecn == ecn_mode::on || (ecn == ecn_mode::automatic && _transport->reads_ecn())) {
        _red_rng.reserve(_ports.size());
        for (port_id p = 0; p < _ports.size(); ++p) {
            _red_rng.emplace_back(stream_seed(_run.seed, streams::red, p));
        }
    }
    // Events at equal times run in the order they were scheduled: the
    // scheme's periodic work first, then faults, flows, hosts' timers.
    _balancer = _scenario.scheme->make(*this);
    _faults.planned = _scenario.faults;
    for (std::uint32_t i = 0; i < _faults.planned.size(); ++i) {
        auto& fault = _faults.planned[i];
        fault.at_ns = static_cast<time_ns>(std::llround(static_cast<double>(fault.at_ns) * _run.scale));
        _events.push(fault.at_ns, event_kind::fault, i);
    }
    if (!_flows.empty()) {
        _events.push(_flows.front().spec.start, event_kind::flow_start, 0);
    }
    _transport->start();
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
        node.ecmp_salt = static_cast<std::uint32_t>(stream_seed(_run.seed, streams::ecmp, n));
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
            p.rng = common::rng(stream_seed(_run.seed, streams::link_loss, port_of(l, dir == 1)));
        }
    }
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
    // Tables hold the destinations a host sends to, not every host: per pair
    // that talks, so that memory follows the traffic (docs/testbed.md,
    // "Memory and scale").
    std::vector<std::vector<topology::node_id>> destinations(n);
    std::vector<topology::node_id> senders;
    for (const auto& fl : _flows) {
        if (destinations[fl.spec.src].empty()) {
            senders.push_back(fl.spec.src);
        }
        destinations[fl.spec.src].push_back(fl.spec.dst);
    }
    for (auto& d : destinations) {
        std::sort(d.begin(), d.end());
        d.erase(std::unique(d.begin(), d.end()), d.end());
    }
    std::sort(senders.begin(), senders.end());
    // TBB: one table per host, each written by exactly one task.
    planner.for_each_table(senders, destinations, [this](topology::node_id h, const tables::table_spec& spec) {
        _hosts[h].table = spec;
    });

    const auto rates = host_rates(f);
    common::rng clocks(stream_seed(_run.seed, streams::clocks));
    const auto& cp = _scenario.clocks;
    for (std::size_t i = 0; i < n; ++i) {
        auto& h = _hosts[i];
        h.id = static_cast<topology::node_id>(i);
        h.ipv4 = f.address_of(h.id).ipv4_host_order();
        h.rate_bps = rates[i];
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
    }
}

void simulation::build_flows()
{
    const auto rates = host_rates(*_scenario.topology);
    const auto specs = generate_flows(_scenario, _run.scale, _run.seed, rates, _options.load);
    const auto& f = *_scenario.topology;
    const std::uint32_t frame_bytes = _scenario.fabric.frame_bytes;
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
        _tally.bytes_offered += fl.spec.bytes;

        auto [it, fresh] = _shortest_links.try_emplace({fl.spec.src, fl.spec.dst});
        if (fresh) {
            const auto nodes = _routing->shortest_path(fl.spec.src, fl.spec.dst);
            for (std::size_t k = 1; k < nodes.size(); ++k) {
                it->second.push_back(*f.link_between(nodes[k - 1], nodes[k]));
            }
        }
        fl.ideal_ns = ideal_over(f, it->second, rates[fl.spec.src], fl.wire_bytes, last);
    }
}

time_ns simulation::ideal_wire_fct(const flow& fl) const
{
    if (!fl.complete() || fl.frames == 0) {
        return -1;
    }
    const std::uint32_t frame_bytes = _scenario.fabric.frame_bytes;
    const std::uint64_t encapsulation = fl.first_wire_bytes > fl.wire_bytes ? fl.first_wire_bytes - fl.wire_bytes : 0;
    const auto last = static_cast<std::uint32_t>(frame_length(fl.spec.bytes, frame_bytes, fl.frames - 1) +
                                                 encapsulation / fl.frames);
    return ideal_over(*_scenario.topology, _shortest_links.at({fl.spec.src, fl.spec.dst}), _hosts[fl.spec.src].rate_bps,
                      fl.first_wire_bytes, last);
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
        _events.for_each_pending([this](const event& e) {
            if (e.kind == event_kind::arrival) {
                rte_pktmbuf_free(_packets[e.target].m);
                _packets.release(e.target);
            }
        });
        if (_balancer) {
            _balancer->release(); // records it holds (RoCE: no mbufs)
        }
        _events.clear();
        if (_transport) {
            _transport->release(); // what hosts hold: queues, windows, reorder buffers, staging
        }
    }
    std::vector<pool_usage> out;
    for (auto* pool : {_pools.frames.get(), _pools.wire.get(), _pools.control.get()}) {
        if (pool != nullptr) {
            out.push_back({pool->name, pool->size, mbufs_in_use(pool)});
        }
    }
    return out;
}

time_ns simulation::end_time() const noexcept
{
    return _tally.completed == _flows.size() ? _tally.last_completion : _now;
}

const hosts::laps_hosts* simulation::laps_hosts() const noexcept
{
    return _roce == nullptr ? static_cast<const hosts::laps_hosts*>(_transport.get()) : nullptr;
}

const pipeline::engine& simulation::engine(topology::node_id host) const
{
    const auto* engines = laps_hosts();
    if (engines == nullptr) {
        throw std::logic_error("simulation::engine: scheme " + std::string(scheme().name) + " runs no engines");
    }
    return engines->engine(host);
}

std::span<const std::uint64_t> simulation::packets_per_path(topology::node_id h) const
{
    return _transport->packets_per_path(h);
}

void simulation::frame_delivered(flow& f, std::uint32_t index)
{
    auto& word = f.seen[index / 64];
    const std::uint64_t bit = std::uint64_t{1} << (index % 64);
    if ((word & bit) != 0) {
        ++f.duplicates;
        return;
    }
    word |= bit;
    ++f.delivered_frames;
    const std::uint32_t payload = frame_payload(f.spec.bytes, _scenario.fabric.frame_bytes, index);
    f.delivered_bytes += payload;
    _tally.bytes_delivered += payload;
    if (f.delivered_frames == f.frames) {
        f.end = _now;
        ++_tally.completed;
        _tally.last_completion = _now;
    }
}

// --- the event loop -----------------------------------------------------------

void simulation::run()
{
    run_until(_run.max_time);
}

void simulation::run_until(time_ns t)
{
    const time_ns through = std::min(t, _run.max_time);
    event next;
    while (!done() && _events.pop_through(through, next)) {
        prefetch_for(_events.lane_ahead(prefetch_far), _events.lane_ahead(prefetch_near));
        step(next);
    }
    if (!done() && t <= _run.max_time) {
        _now = std::max(_now, t);
    }
}

void simulation::prefetch_for(const event* far, const event* near) const noexcept
{
    // On a fabric of thousands of hosts what an event touches has left the
    // cache by the time it runs: these misses were a fifth of the run (perf,
    // fat tree of k = 16). Two steps: the records an event names (`far`,
    // further ahead), then what those records point to (`near`, whose
    // records the first step brought in).
    if (far != nullptr) {
        if (far->kind == event_kind::arrival) {
            // The packet record's first 64 bytes (all a LAPS packet's hops
            // read), and the port's line with its epoch and far end.
            const auto* k = reinterpret_cast<const char*>(&_packets[far->target]);
            __builtin_prefetch(k);
            __builtin_prefetch(k + 63);
            __builtin_prefetch(reinterpret_cast<const char*>(&_ports[far->arg]) + offsetof(port, epoch));
        } else if (far->kind == event_kind::tx_done) {
            // The port's per-packet lines (fabric/link.hpp).
            const auto* pt = reinterpret_cast<const char*>(&_ports[far->target]);
            __builtin_prefetch(pt);
            __builtin_prefetch(pt + 64);
            __builtin_prefetch(pt + 128);
        }
    }
    if (near == nullptr) {
        return;
    }
    if (near->kind == event_kind::arrival) {
        // The node it reaches, its next hop's row, and its mbuf's header
        // (a switch at an anchor writes the anchor index).
        const packet& k = _packets[near->target];
        const topology::node_id at = _ports[near->arg].to;
        __builtin_prefetch(&_nodes[at]);
        if (!k.laps()) {
            return;
        }
        __builtin_prefetch(k.m);
        const topology::node_id target = k.target_at(at); // as forward() will
        if (target == at) {
            _transport->prefetch_delivery(at);
        } else if (target < _nodes.size()) {
            __builtin_prefetch(_forwarding->toward_slot(at, target));
        }
    } else if (near->kind == event_kind::tx_done) {
        // The packet it ends, the node it leaves, and the packet the port
        // sends next (start_next reads its queue link).
        const port& pt = _ports[near->target];
        if (pt.in_service != no_packet) {
            __builtin_prefetch(&_packets[pt.in_service]);
        }
        __builtin_prefetch(&_nodes[pt.from]);
        if (const std::uint32_t next = pt.queue.next_out(pt.paused); next != no_packet) {
            __builtin_prefetch(&_packets[next]);
        }
    }
}

void simulation::step(const event& e)
{
    _now = e.at;
    ++_events_run;
    switch (e.kind) {
    case event_kind::tx_done:
        on_tx_done(e.target);
        break;
    case event_kind::arrival:
        on_arrival(e.target, e.arg);
        break;
    case event_kind::flow_start:
        on_flow_start();
        break;
    case event_kind::fault:
        apply_fault(e.target);
        break;
    case event_kind::pfc:
        on_pfc(e.target, e.arg == 1);
        break;
    case event_kind::host_timer:
        _transport->on_timer(e);
        break;
    case event_kind::scheme_timer:
        _balancer->on_timer(e.target, e.arg);
        break;
    }
    if (_options.progress && (_events_run & 0xffff) == 0) {
        report_progress();
    }
}

void simulation::report_progress()
{
    const auto wall = std::chrono::steady_clock::now();
    if (wall - _last_progress_wall < std::chrono::milliseconds(200)) {
        return;
    }
    _last_progress_wall = wall;
    const double fraction = _tally.bytes_offered == 0 ? 1.0
                                                      : static_cast<double>(_tally.bytes_delivered) /
                                                            static_cast<double>(_tally.bytes_offered);
    _options.progress(fraction, _now);
}

void simulation::on_flow_start()
{
    // Every flow due now; the transport then serves each host once.
    while (_tally.next_start < _flows.size() && _flows[_tally.next_start].spec.start <= _now) {
        auto& f = _flows[_tally.next_start++];
        f.started = true;
        _transport->start_flow(f);
    }
    _transport->flows_started();
    if (_tally.next_start < _flows.size()) {
        _events.push(_flows[_tally.next_start].spec.start, event_kind::flow_start, 0);
    }
}

} // namespace laps::fabric
