#pragma once
// The testbed: many hosts (the real LAPS engine on each, or a RoCEv2 NIC
// model under the other schemes) connected by an emulated fabric of switches
// and links, in virtual time.
//
//   flows ─frames─► host transport ─packets─► port queue ─► link ─► switch ... ─► host transport
//                   (fabric/hosts/)                                  │
//                                                the scheme's path choice (fabric/schemes/)
//
// The simulation owns the event loop, the links, the queues and the buffers;
// the hosts (hosts::transport) and the scheme (schemes::scheme) plug into it
// and use the plumbing below ("for hosts and schemes").
//
// Deterministic: one seed drives every random choice (flows, clocks, link
// losses, engine generators, the schemes' draws), events at the same time
// run in the order they were scheduled, and nothing iterates an unordered
// container. The same scenario and seed give the same results, byte for byte.
//
// Every host clock is virtual time + clocks.epoch + the host's offset; the
// engines get their tables from topology::path_planner and estimate clock
// offsets themselves (tables.clocks: unsynchronized).

#include "fabric/candidates.hpp"
#include "fabric/eal.hpp"
#include "fabric/event_queue.hpp"
#include "fabric/flow.hpp"
#include "fabric/forwarding.hpp"
#include "fabric/host.hpp"
#include "fabric/link.hpp"
#include "fabric/packet.hpp"
#include "fabric/scenario.hpp"
#include "fabric/switch.hpp"
#include "topology/routing.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace laps::pipeline {
class engine;
}

namespace laps::fabric {

namespace hosts {
class transport;
class laps_hosts;
class roce_hosts;
} // namespace hosts

namespace schemes {
class scheme;
}

struct run_options {
    std::optional<std::uint64_t> seed;  // replaces the scenario's
    std::optional<double> scale;        // replaces the scenario's
    std::optional<double> load;         // replaces every poisson item's load
    // Called now and then with (fraction done, virtual time); for a progress bar.
    std::function<void(double, time_ns)> progress;
};

using drop_table = std::array<std::array<std::uint64_t, drop_reason_count>, packet_class_count>;

struct pool_usage {
    std::string name;
    std::uint32_t size = 0;
    std::uint32_t in_use = 0;
};

// How many mbufs each pool gets, and the EAL memory that takes.
struct pool_plan {
    std::uint32_t frames = 0;
    std::uint32_t wire = 0;
    std::uint32_t control = 0;
    std::uint16_t frame_room = 0;
    std::uint16_t wire_room = 0;
    std::uint16_t control_room = 0;
    // The EAL's: the shared hash tables, the pools' rings and headers, slack.
    std::uint32_t eal_memory_mb = 0;
    std::uint64_t engine_bytes = 0;     // the LAPS engines with their flow slots
    std::uint64_t forwarding_bytes = 0; // forwarding's rows

    // The mbuf pools' own mappings (fabric/eal.cpp) when full, with a quarter
    // of slack.
    std::uint64_t pool_bytes() const noexcept
    {
        return (std::uint64_t{frames} * mbuf_footprint(frame_room) + std::uint64_t{wire} * mbuf_footprint(wire_room) +
                std::uint64_t{control} * mbuf_footprint(control_room)) *
               5 / 4;
    }
    // The pools and the EAL's memory.
    std::uint64_t pools_and_tables_bytes() const noexcept { return pool_bytes() + (std::uint64_t{eal_memory_mb} << 20); }
    // What the run may hold at most, by docs/testbed.md "Memory and scale";
    // check_fits() compares it with the machine.
    std::uint64_t model_bytes() const noexcept { return pools_and_tables_bytes() + engine_bytes + forwarding_bytes; }
};

// Throws, with the model's numbers, when `plan` may need more than
// `limit_bytes` (0: this machine's physical memory).
void check_fits(const pool_plan& plan, std::uint64_t limit_bytes = 0);

// The run's mbuf pools: host frames, receive copies, header segments and ACKs.
struct mbuf_pools {
    mempool_ptr frames;
    mempool_ptr wire;
    mempool_ptr control;

    // Free mbufs each pool keeps, growing while it may (fabric/eal.hpp): far
    // more than one step of a host takes (a flow's queue of frames, an
    // engine call's poll_budget packets), so a pool that grows in time never
    // runs dry where one populated at once would not.
    static constexpr std::uint32_t reserve = pool_chunk / 2;

    // Before a host step that may allocate. Throws std::runtime_error when
    // EAL memory runs out.
    void keep_ready() const
    {
        for (auto* p : {frames.get(), wire.get(), control.get()}) {
            if (p->populated_size < p->size && free_mbufs(p) < reserve) [[unlikely]] {
                grow_mbuf_pool(p, reserve);
            }
        }
    }
};

// Fixed for a run: the seed and scale it runs with (the options' or the
// scenario's), its id, when it stops, PFC's resume threshold.
struct run_setup {
    std::uint64_t seed = 0;
    double scale = 1;
    std::uint32_t id = 0;     // unique among the runs of this process (pool and engine names)
    time_ns max_time = 0;
    std::uint64_t pfc_xon = 0;
};

// The scenario's faults (times scaled) and the ones applied so far.
struct fault_book {
    std::vector<fault_spec> planned;
    std::vector<std::pair<time_ns, std::string>> applied;
};

// What a run delivered so far.
struct flow_tally {
    std::size_t next_start = 0; // first flow not started
    std::uint64_t completed = 0;
    std::uint64_t bytes_offered = 0;
    std::uint64_t bytes_delivered = 0;
    time_ns last_completion = 0;
};

class simulation {
public:
    // Builds topology routes, tables, hosts, pools, the scheme and the flow
    // list. Needs a started EAL (start_eal) with at least plan().eal_memory_mb.
    simulation(const scenario& s, const run_options& options = {});
    ~simulation();
    simulation(const simulation&) = delete;
    simulation& operator=(const simulation&) = delete;

    // The memory a scenario needs, before the EAL exists.
    static pool_plan plan(const scenario& s, const run_options& options = {});

    // Until every flow is delivered and the fabric is empty, or run.max_time.
    void run();
    // Events up to and including virtual time `t` (tests use it to look at
    // the fabric mid-run).
    void run_until(time_ns t);
    bool done() const noexcept { return _tally.completed == _flows.size() && _packets.live() == 0; }
    time_ns now() const noexcept { return _now; }
    // Time the last flow completed (or the end of the run if some did not).
    time_ns end_time() const noexcept;

    const scenario& config() const noexcept { return _scenario; }
    std::uint64_t seed() const noexcept { return _run.seed; }
    double scale() const noexcept { return _run.scale; }
    const run_options& options() const noexcept { return _options; }
    const topology::fabric& topology() const noexcept { return *_scenario.topology; }
    const topology::routing& routes() const noexcept { return *_routing; }
    const std::vector<flow>& flows() const noexcept { return _flows; }
    // Flow `f`'s wire bound (results.hpp "Ideal FCT"): its ideal FCT for the
    // bytes its first transmissions took on the wire (flow::first_wire_bytes),
    // the last packet being its last host frame plus the mean encapsulation
    // per frame. -1 while the flow is incomplete (not every frame sent yet).
    time_ns ideal_wire_fct(const flow& f) const;
    const std::vector<port>& ports() const noexcept { return _ports; }
    const std::vector<node_state>& nodes() const noexcept { return _nodes; }
    const std::vector<host_info>& hosts() const noexcept { return _hosts; }
    // The scheme this run compares (its registry row) and its state.
    const schemes::info& scheme() const noexcept { return *_scenario.scheme; }
    const schemes::scheme& balancer() const noexcept { return *_balancer; }
    // Whether the hosts run the RoCE NIC model (else the LAPS engine).
    bool roce() const noexcept { return _roce != nullptr; }
    // The hosts, by transport: null when the run has the other one.
    const hosts::laps_hosts* laps_hosts() const noexcept;
    const hosts::roce_hosts* roce_hosts() const noexcept { return _roce; }
    // Host `host`'s engine (the laps scheme only: throws under RoCE).
    const pipeline::engine& engine(topology::node_id host) const;
    // DATA packets host `h` sent per candidate path (its engine's, or its RoCE NIC's).
    std::span<const std::uint64_t> packets_per_path(topology::node_id h) const;
    // Each host's top-of-rack node: its only switch, or itself when multi-homed.
    topology::node_id tor_of(topology::node_id host) const { return _candidates->tor_of(host); }
    const drop_table& drops() const noexcept { return _drops; }
    std::uint64_t events_run() const noexcept { return _events_run; }
    std::uint64_t completed_flows() const noexcept { return _tally.completed; }
    std::uint64_t bytes_offered() const noexcept { return _tally.bytes_offered; }
    std::uint64_t bytes_delivered() const noexcept { return _tally.bytes_delivered; }
    const pool_plan& pools() const noexcept { return _plan; }
    // Faults applied so far: (time, label).
    const std::vector<std::pair<time_ns, std::string>>& fault_log() const noexcept { return _faults.applied; }

    // Frees every packet in the fabric and every host's, then reports the
    // mbufs each pool still has in use (all 0 unless something leaked). The
    // views above stay valid, except engine().
    std::vector<pool_usage> release();

    // --- For hosts and schemes: the fabric's plumbing ------------------------
    // A packet record at node `at` goes on: delivered there, or queued on the
    // port its carrier's forwarding picks (possibly dropped).
    void forward(std::uint32_t packet, topology::node_id at);
    void drop(std::uint32_t packet, drop_reason why, port_id p = no_port);
    // Frame `index` of flow `f` reached its receiver (duplicates counted, not delivered).
    void frame_delivered(flow& f, std::uint32_t index);
    packet_pool& packets() noexcept { return _packets; }
    event_queue& schedule() noexcept { return _events; }
    std::vector<flow>& flows() noexcept { return _flows; }
    std::vector<node_state>& nodes() noexcept { return _nodes; }
    forwarding& next_hops() noexcept { return *_forwarding; }
    candidate_catalog& candidates() noexcept { return *_candidates; }
    schemes::scheme& balancer() noexcept { return *_balancer; }
    const mbuf_pools& mempools() const noexcept { return _pools; }
    const run_setup& setup() const noexcept { return _run; }

private:
    // Construction.
    void build_ports();
    void build_hosts();
    void build_flows();

    // The event loop.
    void step(const event& e);
    // Asks the cache for what coming events will touch.
    void prefetch_for(const event* far, const event* near) const noexcept;
    void report_progress();
    void on_flow_start();
    void apply_fault(std::uint32_t index);

    // Ports and links (fabric_loop.cpp).
    void on_tx_done(port_id p);
    void on_arrival(std::uint32_t packet, port_id p);
    void on_pfc(port_id p, bool pause);
    void enqueue(std::uint32_t packet, port_id p);
    void start_next(port_id p);
    void red_mark(port_id p, std::uint32_t packet);
    void set_link_down(port_id p);
    // Buffer accounting of the node that holds packet `i` in port `p`.
    void enter_node(std::uint32_t i, port_id p);
    void leave_node(std::uint32_t i, port_id p);

    // Forwarding of the RoCE model's packets with the scheme's hooks (roce_switching.cpp).
    void forward_roce(std::uint32_t packet, topology::node_id at);
    void route_at_source_tor(std::uint32_t packet, topology::node_id at);

    scenario _scenario;
    run_setup _run;
    run_options _options;
    pool_plan _plan;

    std::unique_ptr<topology::routing> _routing;
    std::unique_ptr<forwarding> _forwarding;
    std::unique_ptr<candidate_catalog> _candidates;
    mbuf_pools _pools;
    std::vector<node_state> _nodes;
    std::vector<port> _ports;
    std::vector<host_info> _hosts;
    packet_pool _packets;
    drop_table _drops{};
    std::vector<flow> _flows;
    // Per (sender, receiver) pair with a flow: the links of the shortest path (ideal FCTs).
    std::map<std::pair<topology::node_id, topology::node_id>, std::vector<topology::link_id>> _shortest_links;
    flow_tally _tally;
    fault_book _faults;

    event_queue _events;
    time_ns _now = 0;
    std::uint64_t _events_run = 0;
    std::chrono::steady_clock::time_point _last_progress_wall;
    bool _released = false;
    // RED marking (fabric.ecn): one random stream per port; empty when off.
    std::vector<common::rng> _red_rng;

    std::unique_ptr<hosts::transport> _transport;
    hosts::roce_hosts* _roce = nullptr; // _transport, when the hosts run the RoCE NIC model
    std::unique_ptr<schemes::scheme> _balancer;
};

} // namespace laps::fabric
