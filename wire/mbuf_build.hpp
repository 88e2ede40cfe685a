#pragma once
// Control packets (ACK, PROBE, PROBE_ACK, CREDIT) built into fresh mbufs. Each returns
// a single-segment mbuf the caller owns (normally handed to a TX burst), or
// nullptr when `pool` is empty or the input is not of the expected type.

#include "common/time.hpp"
#include "wire/encode.hpp"
#include "wire/header_writer.hpp"
#include "wire/parse.hpp"

#include <rte_mbuf.h>

namespace laps::wire {

// Any control packet described by `spec` (type ACK, PROBE or PROBE_ACK).
rte_mbuf* build_control(rte_mempool* pool, const outer_config& cfg,
                        const packet_spec& spec) noexcept;

// The ACK of a parsed DATA packet received at local time `now` (ack_for()).
rte_mbuf* build_ack(rte_mempool* pool, const outer_config& cfg, const parsed_packet& data,
                    common::time_ns now) noexcept;

// A PROBE on a path: `header` from make_probe_header().
rte_mbuf* build_probe(rte_mempool* pool, const outer_config& cfg, std::uint32_t dst_ip,
                      std::uint16_t entropy, const laps_header& header) noexcept;

// The PROBE_ACK of a parsed PROBE received at local time `now`.
rte_mbuf* build_probe_ack(rte_mempool* pool, const outer_config& cfg, const parsed_packet& probe,
                          common::time_ns now) noexcept;

// The answer (ACK for DATA, PROBE_ACK for PROBE) to `received`, written by
// the data path's template writer: the same bytes as build_ack and
// build_probe_ack, for fewer instructions.
rte_mbuf* build_answer(rte_mempool* pool, const header_writer& headers, const parsed_packet& received,
                       common::time_ns now) noexcept;

// A CREDIT (header_writer::credit).
rte_mbuf* build_credit(rte_mempool* pool, const header_writer& headers, const credit_route& route,
                       std::uint32_t granted) noexcept;

} // namespace laps::wire
