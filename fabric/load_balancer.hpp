#pragma once
// State of the baseline schemes' path choice (scheme.hpp). Every scheme
// chooses among the same candidate paths LAPS uses for a host pair (the
// source host's PST/PIT from topology::path_planner), and the chosen path
// travels as source-routing anchors, as LAPS's do, so the switches forward
// every scheme's packets the same way. Where the original decides at a switch
// (ECMP, LetFlow, CONGA, ConWeave, DLB, GLB, TELB, Reunion: the source ToR), the decision is made when
// the packet reaches the sender's ToR: its only switch, or the host itself
// when it has several links (a rail GPU: its NIC is its ToR, as in the LAPS
// authors' ns-3 model where each GPU sits behind its own NIC node).
//
// Logic: lb_loop.cpp (ECMP, LetFlow, CONGA, ConWeave), quality_loop.cpp (DLB,
// GLB, TELB), reunion_loop.cpp; the host-side choices in roce_loop.cpp (PLB) and
// host_policy_loop.cpp (RPS, REPS, Hopper, FlowBender, selective spraying).
// Sources per scheme: docs/testbed.md, Schemes.

#include "common/time.hpp"
#include "fabric/link.hpp"
#include "fabric/roce_nic.hpp"
#include "policy/count_min.hpp"
#include "tables/table_spec.hpp"
#include "topology/model.hpp"

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

namespace laps::fabric {

// One candidate path of a host pair, as the source's PIT has it.
struct candidate {
    std::uint16_t pid = 0;
    std::uint8_t hops = 0;
    std::uint8_t anchor_count = 0;
    std::array<topology::node_id, tables::max_anchors> anchors{};
    time_ns uncongested_ns = 0;
    std::uint64_t route = 0; // the path between the two ToRs (CONGA, ConWeave keys)
    std::vector<port_id> ports; // the links it crosses from the source ToR on (GLB, Reunion)
};

struct candidate_set {
    std::vector<candidate> paths;
    time_ns base_rtt_ns = 0; // round trip over the slowest candidate, idle fabric (ConWeave's reply deadline)
};

// LetFlow and CONGA: the flow's current flowlet at its source ToR.
struct flowlet_state {
    bool seen = false;
    std::uint16_t path = 0; // index into the candidate set
    time_ns last = 0;       // last packet of the flow through the ToR
};

// CONGA (Alizadeh et al., SIGCOMM 2014) per leaf.
struct conga_metric {
    std::uint8_t value = 0;
    time_ns at = 0;
};
struct conga_feedback {
    std::vector<std::uint64_t> routes;                     // in first-seen order (round robin)
    std::unordered_map<std::uint64_t, std::uint32_t> slot; // route -> index in routes
    std::vector<std::uint8_t> metric;
    std::vector<bool> changed;
    std::size_t rr = 0;
};
struct conga_leaf {
    std::unordered_map<std::uint64_t, conga_metric> to_leaf; // route -> congestion, fed back from the far leaf
    std::unordered_map<topology::node_id, conga_feedback> from_leaf; // source leaf -> what to feed back
};

// A port's discounting rate estimator (CONGA §3.5): X += bytes sent, X *= (1 - alpha) every period.
struct dre_state {
    double bytes = 0;
    time_ns period_start = 0;
};

// ConWeave's flags on DATA (conweave-routing.h, ConWeaveDataTag).
enum cw_flag : std::uint8_t { cw_data = 1, cw_init = 2, cw_tail = 3 };

// ConWeave's source-ToR state of a flow (conweaveTxState).
struct cw_tx_state {
    bool init = false;
    bool stabilized = true;
    time_ns active = 0;
    time_ns reply_deadline = 0;
    std::uint32_t epoch = 0;
    std::uint8_t phase = 0;
    std::uint16_t path = no_pid; // index into the candidate set
    time_ns tail_ns = 0;
};

// ConWeave's destination-ToR state of a flow (conweaveRxState) and its reorder queue.
struct cw_rx_state {
    bool init = false;
    std::uint32_t epoch = 1;
    std::uint8_t phase = 0;
    time_ns phase0_tx = 0;
    time_ns phase0_rx = 0;
    bool phase0_cache = false;
    time_ns tail_ns = 0;
    bool reordering = false;
    std::deque<std::uint32_t> voq; // held packet records, in arrival order
    topology::node_id tor = topology::no_node;
    std::uint32_t flush_gen = 0;
    bool flush_by_tail = false;
};

// Reunion (seed 000, §3): the source switch's Flowlet Table entry of a flow.
struct reunion_flow {
    bool seen = false;
    bool elephant = false;
    bool reroute = false;   // a notification asked to move it at the interval's end
    std::uint16_t path = 0; // index into the candidate set
};

// What a destination switch learnt in the current interval.
struct reunion_dest_table {
    std::unordered_map<std::uint32_t, std::uint16_t> elephants; // flow -> path (its Link Table, by Path ID)
    std::unordered_map<port_id, std::uint32_t> bottlenecks;     // bottleneck link -> the last flow marked on it
};

// A notification in flight (its packet carries the index).
struct reunion_note {
    std::uint32_t flow = 0;
    port_id bottleneck = no_port;
    std::vector<port_id> high_utilisation; // links at or above t elephants
};

struct reunion_state {
    std::vector<reunion_flow> flows;                        // per testbed flow
    std::vector<std::optional<policy::count_min>> sketch;  // per node (source switches)
    std::vector<std::vector<std::uint32_t>> elephants;     // per source switch: its elephant flows
    std::vector<std::vector<port_id>> avoid;               // per source switch: links notified this interval
    std::vector<reunion_dest_table> dest;                  // per node (destination switches)
    std::vector<reunion_note> notes;
    std::vector<std::uint32_t> free_notes;
};

} // namespace laps::fabric
