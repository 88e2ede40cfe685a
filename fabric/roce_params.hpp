#pragma once
// Parameters of the RoCEv2 NIC model and of the baseline schemes (scenario
// section `roce:`, docs/testbed.md). The paper (§IV-A) runs ECMP, LetFlow,
// CONGA and ConWeave on RoCEv2 + DCQCN and PLB on DCTCP, "with the default
// values of [39], [40]": the defaults below are those of the ConWeave ns-3
// artefact (github.com/conweave-project/conweave-ns3: run.py for a lossless
// 3-tier fabric, src/point-to-point/model/rdma-hw.cc), which derives from the
// HPCC artefact. Where the LAPS authors' own artefact (github.com/wany16/
// Laps-ns3, inputFiles/*/CONFIG_DCQCN.txt) differs, the comment says so.

#include "common/time.hpp"

#include <cstdint>
#include <vector>

namespace laps::fabric {

using common::time_ns;

enum class loss_recovery : std::uint8_t {
    go_back_n, // RoCEv2: the receiver NACKs the first gap, the sender resends from it
    irn,       // IRN (Mittal et al., SIGCOMM 2018): selective repeat, BDP flow control
    automatic, // Go-Back-N on a lossless (PFC) fabric, IRN on a lossy one: the ConWeave
               // artefact's rule (run.py: "Either IRN or PFC should be true")
};

enum class window_mode : std::uint8_t {
    none, // rate only (ConWeave artefact: DCQCN without a window, HAS_WIN 0)
    bdp,  // at most one BDP in flight, scaled by rate/line rate (HPCC artefact VAR_WIN; DCTCP)
    automatic, // none for DCQCN, bdp for DCTCP (the ConWeave/HPCC run.py choice)
};

// DCQCN (Zhu et al., SIGCOMM 2015), the artefact's "Mellanox" version (cc_mode 1).
struct dcqcn_params {
    // Notification point: a CNP at most once per this per QP (DCQCN paper: N = 50 us).
    // The ConWeave artefact flags a CNP on every ACK of a CE-marked packet and
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

struct conga_params {
    time_ns dre_period_ns = 50 * common::ns_per_us; // ConWeave artefact conga_dreTime 50 us
    double dre_alpha = 0.2;                          // conga_alpha
    std::uint32_t quantize_bits = 3;                 // conga_quantizeBit
    time_ns aging_ns = 500 * common::ns_per_us;      // conga_agingTime: older feedback counts as 0
};

struct plb_params {
    std::uint32_t forced_rounds = 12;   // PLB_REHASH_ROUNDS (paper §IV-B: 12)
    std::uint32_t idle_rounds = 3;      // IDLE_REHASH_ROUNDS: repath when nothing is in flight
    double congested_fraction = 0.5;    // a round is congested when >= this share of ACKs echo ECN
};

// ConWeave (Song et al., SIGCOMM 2023), run.py's values for a lossless 3-tier fabric.
struct conweave_params {
    time_ns extra_reply_deadline_ns = 4 * common::ns_per_us;  // cwh_extra_reply_deadline
    time_ns path_pause_ns = 16 * common::ns_per_us;           // cwh_path_pause_time
    time_ns extra_voq_flush_ns = 64 * common::ns_per_us;      // cwh_extra_voq_flush_time
    time_ns default_voq_wait_ns = 600 * common::ns_per_us;    // cwh_default_voq_waiting_time
    time_ns tx_expiry_ns = 1000 * common::ns_per_us;          // cwh_tx_expiry_time
};

// The other seeds' systems (issue 17; docs/testbed.md has the sources).
// REPS (seed 001, Algorithm 1): 256 entropies, a cache of 8 (the authors'
// code); the first BDP (irn_bdp_bytes) explores. The freeze after a timeout
// lasts freeze (0: no freezing).
struct reps_params {
    std::uint16_t entropies = 256;
    std::uint16_t cache_size = 8;
    time_ns freeze_ns = 1 * common::ns_per_ms;
};

// Hopper (seed 002, Table 1).
struct hopper_params {
    double probe_threshold = 1.5;
    double congestion_threshold = 2.5;
    double probe_ttl = 4.0;
    double ewma_gain = 1.0;
    double switch_margin = 0.8;
    std::uint16_t entropies = 256;
};

// FlowBender (Kabbani et al., CoNEXT 2014: T = 5%, N = 1).
struct flowbender_params {
    double marked_fraction = 0.05;
    std::uint32_t rounds = 1;
    std::uint16_t entropies = 256;
};

// Selective spraying (seed 004): flows of at least elephant_bytes spray.
struct selective_params {
    std::uint64_t elephant_bytes = 1'000'000;
    bool by_sent_bytes = false; // classify by bytes sent so far instead of the posted size
    std::vector<std::uint32_t> items; // traffic items (jobs, their QP ranges) marked to spray
};

// DLB and GLB (seed 004): per flowlet (flowlet_timeout) the best path by
// link quality, a 3-bit level of the larger of the port's load (CONGA's DRE,
// conga.dre_*) and its queue depth against queue_full_bytes. GLB adds the
// remote links of the path as the neighbours last advertised them, one
// heartbeat every heartbeat (the seed's example: 20 ms, change-based).
struct dlb_params {
    std::uint64_t queue_full_bytes = 100'000;
    time_ns heartbeat_ns = 50 * common::ns_per_us;
};

// TELB (seed 004): a policy table pins every flow of a traffic item (a
// tenant or job) to one candidate path; flows no rule matches are pinned by
// their 5-tuple hash.
struct telb_rule {
    std::uint32_t item = 0;
    std::uint16_t path = 0;
};

// Reunion (seed 000, §3, §4.1: s = 1000 us, t = 1; CMS of 7 rows x 2000).
struct reunion_params {
    time_ns interval_ns = 1000 * common::ns_per_us;
    std::uint32_t tolerance = 1;
    std::uint64_t elephant_bytes = 1'000'000;
    std::uint32_t cms_depth = 7;
    std::uint32_t cms_width = 2000;
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
    // spray (scheme.hpp `reorders`), 0 (IRN as published) for the others.
    std::int32_t reorder_tolerance_packets = -1;
    // A receiver repeats a NACK for the same gap at most this often (NACKGenerationInterval 4 us).
    time_ns nack_interval_ns = 4 * common::ns_per_us;
    // The NIC's TX scheduler keeps at most this many of the host's own DATA
    // packets queued per port (it pulls from QPs when a port has room).
    std::uint32_t nic_queue_packets = 2;
    // LetFlow and CONGA (paper §IV-A: 50 us; the ConWeave artefact uses 100 us).
    time_ns flowlet_timeout_ns = 50 * common::ns_per_us;
    dcqcn_params dcqcn;
    dctcp_params dctcp;
    conga_params conga;
    plb_params plb;
    conweave_params conweave;
    reps_params reps;
    hopper_params hopper;
    flowbender_params flowbender;
    selective_params selective;
    dlb_params dlb;
    std::vector<telb_rule> telb;
    reunion_params reunion;
};

} // namespace laps::fabric
