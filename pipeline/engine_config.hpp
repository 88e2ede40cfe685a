#pragma once
// What one engine needs to know. The app fills it from its YAML config, the
// testbed from a scenario; tests build it directly.

#include "common/names.hpp"
#include "common/time.hpp"
#include "config/laps_config.hpp"
#include "wire/auth.hpp"
#include "wire/outer.hpp"

#include <array>
#include <cstdint>
#include <memory_resource>
#include <optional>
#include <string>

struct rte_mempool;

namespace laps::pipeline {

class flow_index;

// How much later than the engine's `now` a shell may stamp a DATA or PROBE
// as it leaves (wire/stamp.hpp) for its ACK's round trip still to count:
// a quarter of time_echo's 16-bit range.
inline constexpr std::uint16_t departure_slack_ns = 16384;

enum class unknown_destination_policy : std::uint8_t { pass, drop };
enum class oversize_policy : std::uint8_t { drop, pass };
// Host frames LAPS has no business spraying: non-IP (ARP, LLDP, ...) and
// IP to link-local or link-scope multicast addresses (IPv6 neighbour
// discovery, 169.254/16, 224.0.0/24): sent to the fabric unchanged, or dropped.
enum class local_frame_policy : std::uint8_t { pass, drop };
enum class reorder_gap_action : std::uint8_t { deliver, drop };
// How a receiver answers DATA (docs/wire-format.md "Coalesced ACKs"): one
// ACK per DATA (the paper's receiver), or one ACK_RUN per run of one flow's
// DATA on one path within a receive burst. Senders take both either way.
enum class ack_mode : std::uint8_t { per_packet, coalesced };
// The names config files, the console, the testbed and the benches use.
inline constexpr std::array ack_mode_names{
    common::named<ack_mode>{"per-packet", ack_mode::per_packet},
    common::named<ack_mode>{"coalesced", ack_mode::coalesced},
};

struct engine_config {
    // Unique in the process: names the engine's rte_hash tables.
    std::string name = "laps";
    // Algorithm parameters and the PST/PIT (algo.paths).
    config::laps_config algo;
    // Outer headers: own MAC/IP, next hop MAC, UDP port, fabric MTU, DSCPs.
    wire::outer_config outer;

    unknown_destination_policy unknown_destination = unknown_destination_policy::pass;
    oversize_policy oversize = oversize_policy::drop;
    local_frame_policy non_ip = local_frame_policy::pass;
    local_frame_policy link_local = local_frame_policy::pass;

    // Deliver each flow's frames to the host in sequence order, through a
    // reorder buffer of retransmit.window_packets frames per flow.
    bool in_order = false;
    // In order: frames held behind a gap for this long are given up on
    // (docs/pipeline.md "Receiver guarantees"): delivered in sequence past
    // the gap, or dropped, per `reorder_timeout_action`; a frame of the gap
    // that arrives later is delivered late. Long enough for a resend (2 x
    // realVal of its path), short enough that the host's own transport does
    // not time out first.
    common::time_ns reorder_timeout_ns = 10 * common::ns_per_ms;
    reorder_gap_action reorder_timeout_action = reorder_gap_action::deliver;
    // ACKs per DATA or coalesced per (flow, path) run of a receive burst.
    // Coalesced ACKs need a control pool with wire::coalescing_mbuf_data_room
    // for runs of 32; a smaller room ends runs at what fits it.
    ack_mode acks = ack_mode::per_packet;
    // Fabric packets may carry their receive time (pipeline/rx_timestamp.hpp,
    // in the engine's clock): answers report latencies from it instead of
    // from the burst's `now`.
    bool rx_timestamps = false;
    // Frames held for order over all flows at most: a flow that would hold
    // more is given up on at once (counted), so no flow and no sender can
    // take the mbuf pool. 0: 1/4 of flow_capacity x window (unbounded in practice).
    std::uint32_t reorder_hold_max = 4096;
    // This engine's incarnation (wire: the LAPS epoch): 32 random bits per
    // start in the app. A receiver keys its flows by it, so a restarted
    // sender's flows are new flows, and neither side obeys a packet of
    // another incarnation (docs/wire-format.md "The epoch field").
    std::uint32_t epoch = 1;
    // ACK and PROBE_ACK latencies (clock offset removed) above this are
    // ignored and counted: no path of a data-centre fabric takes a second.
    common::time_ns max_latency_ns = common::ns_per_s;
    // The fabric's key (docs/security.md): every packet this engine sends is
    // signed, and every LAPS packet it receives must verify and be new to its
    // sender's replay window; none: no trailer sent, none required.
    std::optional<wire::auth_key> auth_key;
    // Authenticated senders (address, incarnation) whose replay windows it
    // keeps (512 bytes each); a full table forgets one quiet for
    // auth_peer_idle, or refuses the new sender (fabric_drop_auth_peers_full).
    std::uint32_t auth_peers = 1024;
    common::time_ns auth_peer_idle = 60 * common::ns_per_s;
    // Host frames a flow may queue while its pacer or window holds it; when
    // full, from_host() stops taking frames (backpressure).
    std::uint32_t flow_queue_packets = 64;
    // Flows with nothing queued or in flight are removed after this long.
    common::time_ns flow_idle_ns = 100 * common::ns_per_ms;
    // Packets the engine may stage for the shell between drains.
    std::uint32_t staging_packets = 4096;
    // The NIC's rate, shared by all flows (a token bucket of
    // congestion.pacer_burst_bytes): flows are paced one by one at their AIMD
    // rate, and without this their sum could exceed the port and queue in the
    // NIC, where the wait would pass for path latency. 0: no limit.
    double port_rate_bps = 0.0;
    // Sender steps per poll(): bounds the work of one call.
    std::uint32_t poll_budget = 256;

    // Steering (docs/wire-format.md "Steering tag", docs/app.md): the low
    // `entropy_tag_bits` of every UDP source port this engine sends carry a
    // tag t, fixed per flow, with t % workers == worker. ACKs and PROBE_ACKs
    // echo the port, so rte_flow, a software dispatcher or the emulated link
    // (tag % workers) bring them back to the worker that owns the flow; a
    // receiver with any number of workers steers all DATA of one flow to one
    // worker (tag % its workers). The width is fabric-wide: the same on every
    // host. 0 bits: no tag (one worker).
    std::uint8_t entropy_tag_bits = 0;
    std::uint16_t worker = 0;  // this engine's index among its instance's workers
    std::uint16_t workers = 1; // at most 2^entropy_tag_bits

    // Where the engine's own state lives (flow slots, windows, timers,
    // staging, selection caches): the app gives each worker's engine a
    // resource on its socket (hugepages through rte_malloc_socket when EAL
    // has them). Null: the process heap.
    std::pmr::memory_resource* memory = nullptr;
    // Socket of the engine's rte_hash flow tables (-1: any).
    int socket_id = -1;
    // Receive flows it keeps at once; 0: algo.tables.flow_capacity, as send flows.
    std::uint32_t receive_flow_capacity = 0;
    // Flow tables and PST shared with other engines of the process
    // (flow_slots.hpp: a testbed of thousands of hosts); null: the engine's
    // own. With a shared table every engine has its own non-zero
    // flow_index_tag.
    flow_index* shared_flows = nullptr;
    std::uint32_t flow_index_tag = 0;

    // Mempool for header segments (chained in front of host frames) and for
    // ACK/PROBE/PROBE_ACK packets; data room >= wire::header_mbuf_data_room.
    rte_mempool* control_pool = nullptr;
};

} // namespace laps::pipeline
