#pragma once
// Parameters of the RoCEv2 NIC model (scenario section `roce:`,
// docs/testbed.md); the schemes' own sections (`roce.<scheme>`) are theirs
// (fabric/schemes/). The paper (§IV-A) runs its baselines on RoCEv2 + DCQCN
// or DCTCP "with the default values of [39], [40]": the defaults below are
// those of the ns-3 artefact those baselines were published with (run.py for
// a lossless 3-tier fabric, src/point-to-point/model/rdma-hw.cc;
// docs/testbed.md, Schemes), which derives from the HPCC artefact. Where the
// LAPS authors' own artefact (github.com/wany16/Laps-ns3,
// inputFiles/*/CONFIG_DCQCN.txt) differs, the comment says so.

#include "common/names.hpp"
#include "common/time.hpp"

#include <array>
#include <cstdint>

namespace laps::fabric::hosts {

using common::time_ns;

enum class loss_recovery : std::uint8_t {
    go_back_n, // RoCEv2: the receiver NACKs the first gap, the sender resends from it
    irn,       // IRN (Mittal et al., SIGCOMM 2018): selective repeat, BDP flow control
    automatic, // Go-Back-N on a lossless (PFC) fabric, IRN on a lossy one: the
               // artefact's rule (run.py: "Either IRN or PFC should be true")
};

inline constexpr std::array loss_recovery_names{
    common::named<loss_recovery>{"auto", loss_recovery::automatic},
    common::named<loss_recovery>{"gbn", loss_recovery::go_back_n},
    common::named<loss_recovery>{"irn", loss_recovery::irn},
};

enum class window_mode : std::uint8_t {
    none, // rate only (the artefact: DCQCN without a window, HAS_WIN 0)
    bdp,  // at most one BDP in flight, scaled by rate/line rate (HPCC artefact VAR_WIN; DCTCP)
    automatic, // none for DCQCN, bdp for DCTCP (the artefacts' run.py choice)
};

inline constexpr std::array window_mode_names{
    common::named<window_mode>{"auto", window_mode::automatic},
    common::named<window_mode>{"none", window_mode::none},
    common::named<window_mode>{"bdp", window_mode::bdp},
};

// DCQCN (Zhu et al., SIGCOMM 2015), the artefact's "Mellanox" version (cc_mode 1).
struct dcqcn_params {
    // Notification point: a CNP at most once per this per QP (DCQCN paper: N = 50 us).
    // The artefact flags a CNP on every ACK of a CE-marked packet and
    // rate-limits reactions at the RP instead (rate_decrease_interval).
    time_ns np_interval_ns = 50 * common::ns_per_us;
    // An out-of-order arrival's NACK carries a CNP too (artefact rdma-hw.cc:
    // "out-of-order should accompany with CNP").
    bool cnp_on_nack = true;
    time_ns alpha_interval_ns = 1 * common::ns_per_us;   // ALPHA_RESUME_INTERVAL 1 (DCQCN paper: 55 us)
    double g = 1.0 / 256;                                // EWMA_GAIN 0.00390625
    time_ns decrease_interval_ns = 4 * common::ns_per_us; // RATE_DECREASE_INTERVAL 4
    time_ns rp_timer_ns = 300 * common::ns_per_us;        // RP_TIMER 300 (DCQCN paper: 55 us)
    std::uint32_t fast_recovery_stages = 1;              // FAST_RECOVERY_TIMES 1 (DCQCN paper: F = 5)
    double rate_ai_bps = 40e6;   // RATE_AI 10 * bw / 25 Mb/s = 40 Mb/s at 100 Gb/s (LAPS artefact: 5)
    double rate_hai_bps = 100e6; // RATE_HAI 25 * bw / 25 Mb/s = 100 Mb/s (LAPS artefact: 50)
    double min_rate_bps = 100e6; // MIN_RATE 100 Mb/s
    double rate_on_first_cnp = 1.0; // RateOnFirstCnp
    bool clamp_target = false;      // CLAMP_TARGET_RATE 0
    // DCQCN's byte counter (paper: B = 10 MB); 0 = timer only, as in the artefact.
    std::uint64_t byte_counter_bytes = 0;
};

// The artefact's DCTCP (cc_mode 8, rdma-hw.cc HandleAckDctcp): alpha per
// window of ACKs, rate x (1 - alpha/2) once per window on ECN-echo, additive
// increase per window.
struct dctcp_params {
    double g = 1.0 / 16;          // DCTCP paper (the artefacts share EWMA_GAIN with DCQCN: 1/256)
    double rate_ai_bps = 1000e6;  // DCTCP_RATE_AI 1000 Mb/s
    double min_rate_bps = 100e6;  // MIN_RATE
};

struct roce_params {
    loss_recovery recovery = loss_recovery::automatic;
    window_mode window = window_mode::automatic;
    // Go-Back-N: resend from the last acknowledged PSN after this long without
    // an ACK (artefact L2Timeout 4 ms).
    time_ns rto_ns = 4 * common::ns_per_ms;
    // IRN: RTO_low with fewer than 3 packets in flight, else RTO_high; BDP cap.
    time_ns irn_rto_low_ns = 454 * common::ns_per_us;
    time_ns irn_rto_high_ns = 1350 * common::ns_per_us;
    std::uint64_t irn_bdp_bytes = 100'000;
    // IRN: a PSN at most this far beyond the expected one is kept and ACKed
    // without a NACK (Hopper's extended IRN, seed 002 §4.1), so that spraying
    // does not read every reordering as a loss; -1: 64 for the schemes that
    // spray (their registry row's `reorders`), 0 (IRN as published) for the others.
    std::int32_t reorder_tolerance_packets = -1;
    // A receiver repeats a NACK for the same gap at most this often (NACKGenerationInterval 4 us).
    time_ns nack_interval_ns = 4 * common::ns_per_us;
    // The NIC's TX scheduler keeps at most this many of the host's own DATA
    // packets queued per port (it pulls from QPs when a port has room).
    std::uint32_t nic_queue_packets = 2;
    // Flowlet switching: a flow idle this long starts a new flowlet (paper
    // §IV-A: 50 us; the baselines' artefact uses 100 us).
    time_ns flowlet_timeout_ns = 50 * common::ns_per_us;
    dcqcn_params dcqcn;
    dctcp_params dctcp;
};

} // namespace laps::fabric::hosts
