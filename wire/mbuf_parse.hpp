#pragma once
// parse() and classify() on rte_mbufs. Single-segment mbufs (the common case)
// are read in place; so are chains whose first segment holds all the outer
// headers parse() needs; otherwise the first parse_window / classify_window
// bytes are copied to the stack with rte_pktmbuf_read.

#include "wire/classify.hpp"
#include "wire/parse.hpp"

#include <rte_mbuf.h>

namespace laps::wire {

// As parse(span). Also fails with bad_ipv4_checksum when the NIC checked the
// outer IPv4 checksum and flagged it bad (RTE_MBUF_F_RX_IP_CKSUM_BAD).
parse_result parse(const rte_mbuf* m, std::uint16_t udp_port = default_udp_port,
                   std::size_t pit_capacity = 0) noexcept;

// The same into the caller's `out` (the data path); `out` is meaningful only
// when the result is parse_error::ok.
parse_error parse(const rte_mbuf* m, std::uint16_t udp_port, std::size_t pit_capacity, parsed_packet& out) noexcept;

classification classify(const rte_mbuf* m) noexcept;
// The same into the caller's `out`; returns out.status.
classify_status classify(const rte_mbuf* m, classification& out) noexcept;

} // namespace laps::wire
