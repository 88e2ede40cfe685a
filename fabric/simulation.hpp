#pragma once
// The testbed: many LAPS engines (one per host, the real pipeline::engine)
// connected by an emulated fabric of switches and links, in virtual time.
//
//   flows ─frames─► engine ─mbuf chains─► port queue ─► link ─► switch ... ─► host
//                     ▲                                                       │
//                     └─────── linear copy, like a NIC (from_fabric) ◄────────┘
//
// Deterministic: one seed drives every random choice (flows, clocks, link
// losses, engine generators), events at the same time run in the order they
// were scheduled, and nothing iterates an unordered container. The same
// scenario and seed give the same results, byte for byte.
//
// Every host clock is virtual time + clocks.epoch + the host's offset; the
// engines get their tables from topology::path_planner and estimate clock
// offsets themselves (tables.clocks: unsynchronized).

#include "fabric/eal.hpp"
#include "fabric/event_queue.hpp"
#include "fabric/flow.hpp"
#include "fabric/forwarding.hpp"
#include "fabric/host_nic.hpp"
#include "fabric/link.hpp"
#include "fabric/load_balancer.hpp"
#include "fabric/packet.hpp"
#include "fabric/roce_nic.hpp"
#include "fabric/scenario.hpp"
#include "fabric/switch.hpp"
#include "topology/candidates.hpp"
#include "topology/routing.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace laps::fabric {

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
    std::uint32_t eal_memory_mb = 0; // pools + engine hash tables + slack
};

class simulation {
public:
    // Builds topology routes, tables, engines, pools and the flow list.
    // Needs a started EAL (start_eal) with at least plan().eal_memory_mb.
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
    bool done() const noexcept;
    time_ns now() const noexcept { return _now; }
    // Time the last flow completed (or the end of the run if some did not).
    time_ns end_time() const noexcept;

    const scenario& config() const noexcept { return _scenario; }
    std::uint64_t seed() const noexcept { return _seed; }
    double scale() const noexcept { return _scale; }
    const run_options& options() const noexcept { return _options; }
    const topology::fabric& topology() const noexcept { return *_scenario.topology; }
    const topology::routing& routes() const noexcept { return *_routing; }
    const std::vector<flow>& flows() const noexcept { return _flows; }
    const std::vector<port>& ports() const noexcept { return _ports; }
    const std::vector<node_state>& nodes() const noexcept { return _nodes; }
    const std::vector<host_nic>& hosts() const noexcept { return _hosts; }
    const pipeline::engine& engine(topology::node_id host) const { return *_hosts.at(host).engine; }
    // The scheme this run compares (scheme.hpp); the RoCE side of a run.
    fabric::scheme scheme() const noexcept { return _scenario.scheme; }
    bool roce() const noexcept { return uses_roce(_scenario.scheme); }
    const roce_counters& roce_totals() const noexcept { return _roce; }
    // DATA packets host `h` sent per candidate path (its engine's, or its RoCE NIC's).
    const std::vector<std::uint64_t>& packets_per_path(topology::node_id h) const;
    const roce_qp& qp(std::uint32_t flow) const { return _qps.at(flow); }
    // IRN receivers: out-of-order PSNs a receiver held when DATA arrived (the
    // engines' reorder histogram's RoCE counterpart; the last bin is "or more").
    const std::array<std::uint64_t, pipeline::engine::reorder_histogram_size>& roce_reorder_histogram() const noexcept
    {
        return _roce_reorder;
    }
    std::uint64_t roce_reorder_max() const noexcept { return _roce_reorder_max; }
    // Each host's top-of-rack node: its only switch, or itself when multi-homed.
    topology::node_id tor_of(topology::node_id host) const { return _tor.at(host); }
    const drop_table& drops() const noexcept { return _drops; }
    std::uint64_t events() const noexcept { return _events_run; }
    std::uint64_t completed_flows() const noexcept { return _completed; }
    std::uint64_t bytes_offered() const noexcept { return _bytes_offered; }
    std::uint64_t bytes_delivered() const noexcept { return _bytes_delivered; }
    const pool_plan& pools() const noexcept { return _plan; }
    // Faults applied so far: (time, label).
    const std::vector<std::pair<time_ns, std::string>>& fault_log() const noexcept { return _fault_log; }

    // Frees every packet in the fabric and every engine, then reports the
    // mbufs each pool still has in use (all 0 unless something leaked). The
    // views above stay valid, except engine().
    std::vector<pool_usage> release();

private:
    // Construction.
    void build_ports();
    void build_hosts();
    void build_flows();
    pipeline::engine_config engine_config_for(const host_nic& h) const;

    // The event loop.
    void step(const event& e);
    void on_tx_done(port_id p);
    void on_arrival(std::uint32_t packet, port_id p);
    void on_host_wake(topology::node_id h, time_ns at);
    void on_housekeeping(topology::node_id h);
    void on_flow_start();
    void apply_fault(std::uint32_t index);
    void on_pfc(port_id p, bool pause);
    void on_roce_timer(std::uint32_t flow, std::uint32_t arg);
    void on_nic_wake(topology::node_id h, time_ns at);
    void on_lb_timer(std::uint32_t flow, std::uint32_t gen);
    void on_lb_tick(std::uint32_t which);

    // Fabric.
    void forward(std::uint32_t packet, topology::node_id at);
    void enqueue(std::uint32_t packet, port_id p);
    void start_next(port_id p);
    void deliver(std::uint32_t packet, topology::node_id host);
    void drop(std::uint32_t packet, drop_reason why, port_id p = no_port);
    void set_link_down(port_id p);
    // Buffer accounting of the node that holds packet `i` in port `p`.
    void enter_node(std::uint32_t i, port_id p);
    void leave_node(std::uint32_t i, port_id p);

    // Hosts.
    void service(host_nic& h);
    bool drain_to_fabric(host_nic& h);
    bool drain_to_host(host_nic& h);
    bool pump(host_nic& h);
    void inject(host_nic& h, rte_mbuf* m);
    void schedule_wake(host_nic& h, time_ns retry_at = no_wake);

    void report_progress();

    // RoCE NIC model (roce_loop.cpp).
    void roce_setup();
    void roce_start(flow& f);
    void roce_pump(topology::node_id h);
    void roce_emit(std::uint32_t flow, std::uint32_t psn);
    void roce_forward(std::uint32_t packet, topology::node_id at);
    void roce_deliver(std::uint32_t packet, topology::node_id host);
    void roce_on_data(const packet& k, topology::node_id host);
    void roce_on_ack(const packet& k);
    void roce_send_ack(const flow& f, topology::node_id host, roce_op op, std::uint32_t psn, const packet& data,
                       bool ooo, std::int64_t sack);
    void roce_done(std::uint32_t flow);
    // A new RoCE-model record of `roce_ctl_bytes` (probes, answers, switch
    // notifications): its index; `alloc` may move other records.
    std::uint32_t roce_control(roce_op op, packet_class cls, bool priority, topology::node_id src,
                               topology::node_id dst, std::uint32_t flow);
    void roce_retime(roce_qp& q);
    void roce_arm(std::uint32_t flow, roce_timer kind, time_ns at);
    void roce_arm_rto(std::uint32_t flow);
    bool roce_next_psn(roce_qp& q, std::uint32_t& psn) const;
    void frame_delivered(flow& f, std::uint32_t index);

    // Host-side policies of the other seeds (host_policy_loop.cpp).
    std::uint32_t roce_hash(topology::node_id src, topology::node_id dst, std::uint16_t sport) const;
    void host_policy_start(const flow& f, roce_qp& q, const candidate_set& cs);
    void host_policy_entropy(const flow& f, roce_qp& q, packet& k);
    void host_policy_ack(const packet& k, roce_qp& q);
    void host_policy_timeout(std::uint32_t flow, roce_qp& q);
    void hopper_send_probe(std::uint32_t flow, std::uint16_t entropy);
    void hopper_answer(const packet& probe, topology::node_id host);
    void hopper_on_reply(const packet& reply);

    // Switch-side modes of the AI-fabric chapter (quality_loop.cpp) and Reunion (reunion_loop.cpp).
    std::uint8_t link_quality(port_id p);
    std::uint16_t quality_pick(topology::node_id at, const candidate_set& cs, bool remote);
    std::uint16_t telb_pick(const packet& k, std::uint32_t paths);
    void glb_heartbeat();
    void reunion_setup();
    std::uint16_t reunion_source(packet& k, topology::node_id at, const candidate_set& cs);
    void reunion_hop(packet& k, port_id out);
    void reunion_dest(const packet& k, topology::node_id at);
    void reunion_interval();
    void reunion_on_notify(const packet& k, topology::node_id at);

    // Baseline schemes' path choice (lb_loop.cpp).
    const candidate_set& candidates(topology::node_id src, topology::node_id dst);
    std::vector<port_id> route_ports(topology::node_id from, const candidate& c, topology::node_id dst) const;
    void lb_source_tor(std::uint32_t packet, topology::node_id at);
    bool lb_dest_tor(std::uint32_t packet, topology::node_id at);
    void lb_on_ack(packet& k, topology::node_id at);
    void lb_control(std::uint32_t packet, topology::node_id at);
    std::uint16_t conga_pick(topology::node_id at, const candidate_set& cs, topology::node_id dst);
    std::uint16_t conweave_source(packet& k, const candidate_set& cs);
    bool conweave_dest(std::uint32_t packet, topology::node_id at);
    void conweave_send(roce_op op, const packet& data, topology::node_id at, std::uint8_t flag, std::uint8_t phase);
    void conweave_flush(std::uint32_t flow, bool by_tail);
    void dre_add(port_id p, std::uint32_t bytes);
    std::uint8_t dre_level(port_id p);
    void red_mark(port_id p, std::uint32_t packet);

    scenario _scenario;
    std::uint64_t _seed;
    double _scale;
    run_options _options;
    pool_plan _plan;
    std::uint32_t _run_id;

    std::unique_ptr<topology::routing> _routing;
    std::unique_ptr<forwarding> _forwarding;
    std::vector<double> _host_rate_bps;

    mempool_ptr _frame_pool;
    mempool_ptr _wire_pool;
    mempool_ptr _control_pool;

    std::vector<node_state> _nodes;
    std::vector<port> _ports;
    std::vector<host_nic> _hosts;
    std::unordered_map<std::uint32_t, topology::node_id> _host_by_ip; // lookups only
    packet_pool _packets;
    drop_table _drops{};

    std::vector<flow> _flows;
    std::size_t _next_start = 0; // first flow not started
    std::uint64_t _completed = 0;
    std::uint64_t _bytes_offered = 0;
    std::uint64_t _bytes_delivered = 0;
    time_ns _last_completion = 0;

    std::vector<fault_spec> _faults; // times scaled
    std::vector<std::pair<time_ns, std::string>> _fault_log;

    event_queue _events;
    time_ns _now = 0;
    time_ns _max_time = 0;
    std::uint64_t _pfc_xon = 0;
    std::uint64_t _events_run = 0;
    std::uint64_t _last_progress_events = 0;
    std::chrono::steady_clock::time_point _last_progress_wall;
    std::vector<rte_mbuf*> _burst; // drain buffer
    bool _released = false;

    // RoCE schemes (roce_loop.cpp, lb_loop.cpp); empty under LAPS.
    std::vector<roce_qp> _qps;   // per flow
    std::vector<roce_rx> _rxs;   // per flow
    std::vector<roce_nic> _nics; // per host
    roce_counters _roce{};
    std::vector<topology::node_id> _tor;           // per host
    std::vector<std::int32_t> _pst_row;            // src x hosts + dst -> row of the source's PST
    std::vector<std::vector<std::int32_t>> _pit_row; // per host: pid -> row of its PIT (made on first use)
    std::vector<std::unique_ptr<candidate_set>> _candidate_sets; // src x hosts + dst, made on first use
    std::vector<common::rng> _lb_rng;              // per node
    std::vector<flowlet_state> _flowlets;          // per flow (LetFlow, CONGA)
    std::vector<conga_leaf> _conga;                // per node
    std::vector<dre_state> _dre;                   // per port (CONGA)
    std::vector<cw_tx_state> _cw_tx;               // per flow (ConWeave)
    std::vector<cw_rx_state> _cw_rx;               // per flow
    std::unordered_map<std::uint64_t, time_ns> _cw_paused; // route -> no new flows on it before this
    std::array<std::uint64_t, pipeline::engine::reorder_histogram_size> _roce_reorder{};
    std::uint64_t _roce_reorder_max = 0;
    std::uint32_t _reorder_tolerance = 0;          // IRN: out-of-order PSNs acknowledged without a NACK
    std::vector<std::uint8_t> _glb_quality;        // per port: the quality its switch last advertised (GLB)
    reunion_state _reunion;                        // Reunion's tables (empty unless scheme reunion)
    std::vector<std::vector<std::uint32_t>> _reunion_port_flows; // per port: elephants seen this interval
    std::vector<common::rng> _red_rng;             // per port: RED marking draws
    bool _red = false;
};

} // namespace laps::fabric
