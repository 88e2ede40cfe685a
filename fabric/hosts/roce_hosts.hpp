#pragma once
// The hosts of every scheme but laps: a RoCEv2 NIC model on each
// (roce_nic.hpp), its packets records in the fabric without mbufs. QPs
// start, the NIC pulls packets from them (roce_sender.cpp), receivers
// acknowledge (roce_receiver.cpp), DCQCN or DCTCP adjusts rates, Go-Back-N
// or IRN recovers losses; the scheme (fabric/schemes/) steers the paths
// through its host-side hooks.

#include "fabric/hosts/roce_nic.hpp"
#include "fabric/hosts/transport.hpp"
#include "fabric/simulation.hpp"
#include "pipeline/engine.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace laps::fabric::hosts {

class roce_hosts final : public transport {
public:
    // After the simulation's hosts and flows.
    explicit roce_hosts(simulation& sim);

    // The mbuf pools a RoCE run needs: few (its packets are records).
    static pool_plan plan(const scenario& s);

    void start_flow(flow& f) override;
    void deliver(std::uint32_t packet, topology::node_id host) override;
    void on_timer(const event& e) override;
    void on_port_free(topology::node_id host) override { pump(host); }
    bool reads_ecn() const noexcept override { return true; } // DCQCN and DCTCP need the marks
    std::span<const std::uint64_t> packets_per_path(topology::node_id h) const override
    {
        return _nics.at(h).packets_per_pid;
    }

    // A DATA packet of host `src` took PIT path `pid` (its source ToR routed it).
    void count_sent(topology::node_id src, std::uint16_t pid) { ++_nics[src].packets_per_pid[pid]; }

    const roce_qp& qp(std::uint32_t flow) const { return _qps.at(flow); }
    const roce_counters& counters() const noexcept { return _counters; }
    // IRN receivers: out-of-order PSNs a receiver held when DATA arrived (the
    // engines' reorder histogram's RoCE counterpart; the last bin is "or more").
    const std::array<std::uint64_t, pipeline::engine::reorder_histogram_size>& reorder_histogram() const noexcept
    {
        return _reorder;
    }
    std::uint64_t reorder_max() const noexcept { return _reorder_max; }

private:
    // Sender (roce_sender.cpp).
    bool next_psn(roce_qp& q, std::uint32_t& psn) const;
    void pump(topology::node_id h);
    void on_nic_wake(topology::node_id h, time_ns at);
    void emit(std::uint32_t flow, std::uint32_t psn);
    void retime(roce_qp& q);
    void arm(std::uint32_t flow, roce_timer kind, time_ns at);
    void arm_rto(std::uint32_t flow);
    void on_qp_timer(std::uint32_t flow, std::uint32_t arg);
    void on_ack(const packet& k);
    void finish(std::uint32_t flow);

    // Receiver (roce_receiver.cpp).
    void on_data(const packet& k, topology::node_id host);
    void send_ack(const flow& f, topology::node_id host, roce_op op, std::uint32_t psn, const packet& data, bool ooo,
                  std::int64_t sack);
    void answer_probe(const packet& probe, topology::node_id host);

    simulation& _sim;
    const roce_params& _p;
    bool _irn;                         // IRN, else Go-Back-N (roce.recovery resolved)
    bool _dctcp;                       // DCTCP, else DCQCN (the scheme's transport)
    std::uint32_t _reorder_tolerance;  // IRN: out-of-order PSNs acknowledged without a NACK
    std::uint32_t _packet_bytes;       // a full DATA packet on the wire
    std::vector<roce_nic> _nics;       // per host
    std::vector<roce_qp> _qps;         // per flow
    std::vector<roce_rx> _rxs;         // per flow
    roce_counters _counters{};
    std::array<std::uint64_t, pipeline::engine::reorder_histogram_size> _reorder{};
    std::uint64_t _reorder_max = 0;
};

} // namespace laps::fabric::hosts
