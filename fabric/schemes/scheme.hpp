#pragma once
// A load-balancing scheme of the testbed (registry.hpp lists them): the
// hooks through which it chooses the paths of the RoCE NIC model's packets,
// at the sending host or at the switches, and reacts to the fabric. The
// simulation and the RoCE hosts call them where the original system acts;
// every hook does nothing by default, and the default path choice is the
// switches' ECMP hash of the packet's 5-tuple (RoCEv2's entropy is the UDP
// source port: the QP's, or one a host-side scheme chose for the packet).
//
// A scheme owns its state (per flow, per switch, per port) and its
// counters. Virtual calls: the testbed is not the line-rate path.

#include "config/reader.hpp"
#include "fabric/candidates.hpp"
#include "fabric/flow.hpp"
#include "fabric/hosts/roce_nic.hpp"
#include "fabric/link.hpp"
#include "fabric/packet.hpp"

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

namespace laps::fabric {
class simulation;
}

namespace laps::fabric::schemes {

using hosts::roce_qp;

class scheme {
public:
    virtual ~scheme() = default;
    scheme(const scheme&) = delete;
    scheme& operator=(const scheme&) = delete;

    // --- at the sending host (the RoCE NIC) ---------------------------------
    // A QP starts (its sport, hash and entropy set): the scheme's flow state.
    virtual void on_flow_start(const flow& /*f*/, roce_qp& /*q*/, const candidate_set& /*cs*/) {}
    // A DATA packet of the QP leaves the NIC: its entropy, or its path (k.roce.pid).
    virtual void on_send(const flow& /*f*/, roce_qp& /*q*/, packet& /*k*/) {}
    // An ACK or NACK reached its sender (after the NIC's recovery and rate control).
    virtual void on_ack(const packet& /*ack*/, roce_qp& /*q*/) {}
    // A DCTCP round of ACKs ended: `marked` of them echoed ECN (before the NIC retimes).
    virtual void on_round(std::uint32_t /*flow*/, roce_qp& /*q*/, double /*marked*/) {}
    // The QP's retransmission timer fired with data outstanding.
    virtual void on_timeout(std::uint32_t /*flow*/, roce_qp& /*q*/) {}
    // An answer to one of the scheme's probes reached the sender.
    virtual void on_probe_reply(const packet& /*reply*/, roce_qp& /*q*/) {}

    // --- at the switches -----------------------------------------------------
    // The candidate (an index into `cs`, never empty) for a DATA packet or a
    // probe at its source ToR `at`.
    virtual std::uint16_t choose_path(packet& k, topology::node_id at, const candidate_set& cs);
    // A DATA packet (record `i`) at its destination ToR `at`, another than its
    // source's: true when the scheme keeps it (and forwards it later).
    virtual bool at_destination_tor(std::uint32_t /*i*/, topology::node_id /*at*/) { return false; }
    // A DATA packet or probe leaves a node through port `out`.
    virtual void on_hop(packet& /*k*/, port_id /*out*/) {}
    // An ACK, NACK or probe answer is at node `at` on its way to the sender.
    virtual void on_reverse(packet& /*k*/, topology::node_id /*at*/) {}
    // One of the scheme's switch messages (roce_op::switch_control) reached
    // its destination `at` (the record is already released).
    virtual void on_control(const packet& /*k*/, topology::node_id /*at*/) {}
    // Port `p` starts sending a packet of `bytes`.
    virtual void on_dequeue(port_id /*p*/, std::uint32_t /*bytes*/) {}
    // One of its timers (event_kind::scheme_timer; target and arg its own).
    virtual void on_timer(std::uint32_t /*target*/, std::uint32_t /*arg*/) {}
    // The run ends: release the packet records it holds.
    virtual void release() {}

    // --- reports -------------------------------------------------------------
    // Times a flow's packets moved to another candidate path.
    std::uint64_t path_changes() const noexcept { return _path_changes; }
    // Its counters, in the order of its registry row's `counters`.
    virtual std::span<const std::uint64_t> counts() const noexcept { return {}; }
    // A line of its own for the summary table (empty: none).
    virtual std::string note() const { return {}; }

protected:
    explicit scheme(simulation& sim) noexcept : _sim(sim) {}

    simulation& _sim;
    std::uint64_t _path_changes = 0;
};

// The header fields a scheme writes on a packet (packet::scheme_header): a
// trivially copyable struct of at most scheme_header_bytes whose all-zero
// bytes are its defaults, copied in and out.
template <typename H>
H header_of(const packet& k) noexcept
{
    static_assert(std::is_trivially_copyable_v<H> && sizeof(H) <= scheme_header_bytes);
    H h;
    std::memcpy(&h, k.scheme_header.data(), sizeof h);
    return h;
}

template <typename H>
void set_header(packet& k, const H& h) noexcept
{
    static_assert(std::is_trivially_copyable_v<H> && sizeof(H) <= scheme_header_bytes);
    std::memcpy(k.scheme_header.data(), &h, sizeof h);
}

// The switches' ECMP choice among `n` candidates: the packet's 5-tuple hash
// with the switch's salt.
std::uint16_t ecmp_choice(const simulation& sim, const packet& k, topology::node_id at, std::uint32_t n) noexcept;

} // namespace laps::fabric::schemes
