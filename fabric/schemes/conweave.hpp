#pragma once
// conweave: ConWeave (Song et al., SIGCOMM 2023; paper §IV), as its ns-3
// artefact's conweave-routing.cc does it, at the ToRs:
//   source ToR       a flow idle past tx_expiry, or whose last reroute is
//                    settled, starts an epoch: its next packet asks for an
//                    RTT_REPLY (flag INIT); when no reply came within the base
//                    RTT plus a margin, the next packet is the old path's TAIL
//                    and the flow moves to a new path (two random candidates,
//                    the first not paused by a NOTIFY);
//   destination ToR  answers INIT and TAIL (RTT_REPLY, CLEAR), NOTIFYs the
//                    source of ECN on a path (pausing it there), and holds
//                    packets of the new path that overtake the TAIL in a
//                    reorder queue until the TAIL arrives or a predicted time
//                    passes.
// Parameters `roce.conweave`.

#include "fabric/schemes/scheme.hpp"

#include <any>
#include <array>
#include <memory>
#include <string>
#include <string_view>

namespace laps::fabric::schemes {

// The artefact's run.py values for a lossless 3-tier fabric.
struct conweave_params {
    time_ns extra_reply_deadline_ns = 4 * common::ns_per_us;  // cwh_extra_reply_deadline
    time_ns path_pause_ns = 16 * common::ns_per_us;           // cwh_path_pause_time
    time_ns extra_voq_flush_ns = 64 * common::ns_per_us;      // cwh_extra_voq_flush_time
    time_ns default_voq_wait_ns = 600 * common::ns_per_us;    // cwh_default_voq_waiting_time
    time_ns tx_expiry_ns = 1000 * common::ns_per_us;          // cwh_tx_expiry_time
};

inline constexpr std::array<std::string_view, 7> conweave_counters{
    "cw_reroutes",       // reply timeouts that moved a flow
    "cw_replies",        // RTT_REPLY + CLEAR sent by destination ToRs
    "cw_notifies",       // NOTIFY sent (ECN on a path)
    "cw_held",           // DATA held in a destination ToR's reorder queue
    "cw_held_max",       // most DATA one flow's reorder queue held at once
    "cw_flush_by_tail",  // reorder queues released by their TAIL
    "cw_flush_by_timer", // released by the flush timer (TAIL late or lost)
};

std::unique_ptr<scheme> make_conweave(simulation& sim);
std::any parse_conweave_params(const config::reader& r, const YAML::Node& n);

} // namespace laps::fabric::schemes
