#pragma once
// A packet's receive time, carried in DPDK's RX timestamp dynamic field
// (RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, flagged RTE_MBUF_DYNFLAG_RX_TIMESTAMP)
// in the engine's clock (ns). A shell that takes packets in bursts sets it so
// that an answer reports each packet's one-way latency, not the latency plus
// its wait for the burst (engine_config rx_timestamps). The testbed sets it
// on every packet of a receive burst (engine.rx_burst_us); the app does not:
// a NIC's timestamps count in the NIC's clock, which laps does not translate.

#include "common/time.hpp"

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cstdint>
#include <stdexcept>

namespace laps::pipeline {

class rx_timestamp {
public:
    // Registers the field and flag (idempotent: every caller gets the same).
    rx_timestamp()
    {
        if (rte_mbuf_dyn_rx_timestamp_register(&_offset, &_flag) != 0) {
            throw std::runtime_error("the mbuf RX timestamp field could not be registered");
        }
    }

    void set(rte_mbuf* m, common::time_ns at) const noexcept
    {
        *RTE_MBUF_DYNFIELD(m, _offset, rte_mbuf_timestamp_t*) = static_cast<rte_mbuf_timestamp_t>(at);
        m->ol_flags |= _flag;
    }

    // The packet's receive time when it carries one, else `now`.
    common::time_ns of(const rte_mbuf* m, common::time_ns now) const noexcept
    {
        return (m->ol_flags & _flag) != 0
                   ? static_cast<common::time_ns>(*RTE_MBUF_DYNFIELD(m, _offset, const rte_mbuf_timestamp_t*))
                   : now;
    }

private:
    int _offset = -1;
    std::uint64_t _flag = 0;
};

} // namespace laps::pipeline
