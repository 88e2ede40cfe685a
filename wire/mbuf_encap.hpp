#pragma once
// LAPS encapsulation on rte_mbufs (sender side) and its removal (receiver
// side). Hot path: noexcept, no logging; failures come back as values for
// the caller to count (to_string gives "encap_no_headroom", ...).
//
// Two ways to put the headers in front of a host frame:
//  - encapsulate(): in place, with rte_pktmbuf_prepend. The host frame's own
//    headroom (RTE_PKTMBUF_HEADROOM, 128 in Debian's DPDK) covers the largest
//    header, 42 + 28 + 4 x 4 = 86 bytes. For packets that are not kept.
//  - encapsulate_chained(): the headers in a small mbuf of their own, chained
//    in front of the host frame, which gains one reference per segment. For
//    packets kept for retransmission: a resend builds a fresh header segment
//    (new time, flags, pid, anchors) and never writes into a buffer that a
//    NIC may still be reading from an earlier, not yet completed, transmit.
//    The TX queue must accept multi-segment mbufs (RTE_ETH_TX_OFFLOAD_MULTI_SEGS).

#include "wire/encode.hpp"
#include "wire/parse.hpp"

#include <rte_mbuf.h>

#include <cstdint>
#include <string_view>

namespace laps::wire {

static_assert(max_overhead <= RTE_PKTMBUF_HEADROOM,
              "the default mbuf headroom must hold the largest LAPS header");

// Data room for mbufs of a header pool (rte_pktmbuf_pool_create's
// data_room_size): the default headroom plus the largest header, rounded up.
inline constexpr std::uint16_t header_mbuf_data_room = RTE_PKTMBUF_HEADROOM + 128;
// Data room for a control pool whose engine coalesces ACKs (engine_config
// acks): room for the longest ACK_RUN, 42 + 424 + 20 = 486 bytes. With less,
// an engine ends its runs at what fits.
inline constexpr std::uint16_t coalescing_mbuf_data_room = RTE_PKTMBUF_HEADROOM + 512;
static_assert(coalescing_mbuf_data_room - RTE_PKTMBUF_HEADROOM >= outer_size + laps_max_run_size + auth_size);

enum class encap_error : std::uint8_t {
    ok,
    no_headroom,    // in place: fewer than headers_size() bytes of headroom
    bad_header,     // the spec would not parse (type, anchor count/index, frame too short)
    too_long,       // IPv4 total length would exceed 65535
    over_mtu,       // IPv4 total length would exceed outer_config::mtu
    too_many_segs,  // chaining would exceed the mbuf segment limit
    no_header_mbuf, // the header pool is empty
    count_,
};

inline constexpr std::size_t encap_error_count = static_cast<std::size_t>(encap_error::count_);

// Counter name: "encap_ok", "encap_no_headroom", ...
std::string_view to_string(encap_error e) noexcept;

// Prepends outer Ethernet/IPv4/UDP + LAPS header to `host_frame` in place.
// spec.header.type must be DATA; inner_length is taken from the mbuf. On
// failure the mbuf is unchanged.
encap_error encapsulate(rte_mbuf* host_frame, const outer_config& cfg,
                        const packet_spec& spec) noexcept;

// Returns a new chain [header segment] -> host_frame's segments, or nullptr
// with *error set. On success every segment of host_frame has one more
// reference: sending or freeing the returned chain drops exactly that one;
// the caller still owns its own reference and frees it when the packet is
// acknowledged. host_frame itself is never written.
rte_mbuf* encapsulate_chained(rte_mbuf* host_frame, rte_mempool* header_pool,
                              const outer_config& cfg, const packet_spec& spec,
                              encap_error* error = nullptr) noexcept;

// encapsulate_chained's segment alone, for a caller that writes the headers
// itself (the engine's header_writer): a header segment of `size` bytes,
// uninitialised, chained in front of host_frame's segments with the same
// references and checks (too_long, over_mtu, too_many_segs, no_header_mbuf),
// or nullptr with `error` set.
rte_mbuf* chain_header(rte_mbuf* host_frame, rte_mempool* header_pool, const outer_config& cfg,
                       std::uint16_t size, encap_error& error) noexcept;

// First transmissions in the host frame's own headroom (docs/PERFORMANCE.md §7):
// one segment, no header mbuf, no chaining. The sender keeps the frame for
// resends while the packet is in flight, so the packet is the frame itself
// with two references (the window's and the transmit's, the second set by
// a plain store: the frame had no other owner). A consumer of the packet in
// the same process (a net_ring peer, the testbed, a bench) may move its
// data offset when it decapsulates, so where the host frame lies is
// recorded in an mbuf dynamic field and resends find it there.
//
// Registers that field; once per process, before the first transmission
// (any thread, after rte_eal_init). False when DPDK refuses: then every
// transmission is chained.
bool register_frame_field() noexcept;

// The packet of a host frame's first transmission, with `size` bytes of
// uninitialised headers at its start (rte_pktmbuf_mtod): the frame itself
// when it can take them in place (one direct segment, held only by the
// caller, the headroom, the length within 65535 bytes of IPv4 and cfg.mtu),
// otherwise a header segment chained in front of it (`chained` set; the
// caller counts it), or nullptr with `error` set as chain_header.
rte_mbuf* first_transmission(rte_mbuf* host_frame, rte_mempool* header_pool, const outer_config& cfg,
                             std::uint16_t size, bool& chained, encap_error& error) noexcept;

// The host frame's length of a frame sent at least once, whatever its
// mbuf's offsets say now.
std::uint32_t sent_frame_length(const rte_mbuf* kept) noexcept;

// A resend of a frame the window kept, with `size` bytes of uninitialised
// headers at its start. A frame first sent in place is resent in place
// again when no earlier transmission holds the buffer any more (refcount
// 1); otherwise, and for frames first sent chained, a header segment in
// front of the host frame as it was before any prepend, through an indirect
// mbuf from `pool` onto its buffer when its headroom is in use: never a
// write into a buffer a NIC may still be reading. Errors as chain_header,
// plus no_header_mbuf when the indirect mbuf cannot be had.
rte_mbuf* resend_packet(rte_mbuf* kept, rte_mempool* pool, const outer_config& cfg, std::uint16_t size,
                        encap_error& error) noexcept;

// Strips everything before the host frame of a DATA packet that `parsed`
// describes (from parse(m)), and any bytes after it, in place. Returns `m`,
// now the host frame, or nullptr (m unchanged) when the headers are not all in
// the first segment or the tail cannot be trimmed from the last segment.
rte_mbuf* decapsulate(rte_mbuf* m, const parsed_packet& parsed) noexcept;

} // namespace laps::wire
