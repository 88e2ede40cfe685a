#pragma once
// The data path's header writer (docs/wire-format.md §13): DATA and ACK headers
// from per-type templates instead of field-by-field encoding.
//
// Everything in the outer Ethernet/IPv4/UDP headers of one engine's packets
// is fixed per packet type except the IPv4 total length, destination and
// checksum and the UDP source port (the path's entropy) and length. A
// template holds the fixed bytes and the one's-complement sum of the fixed
// IPv4 words, so a packet's checksum is three additions and a fold (the
// incremental form of RFC 1071/1624) instead of a pass over the header. The
// LAPS header is written straight from the values, without a laps_header in
// between. encode_headers (encode.hpp) stays the reference: it validates
// everything and writes the same bytes (tests/unit/wire compares them).
//
// The caller guarantees what encode_headers would check: at most
// max_anchors anchors, a DATA frame of at least an Ethernet header, and a
// packet of at most 65535 bytes of IPv4.

#include "common/time.hpp"
#include "wire/ack_run.hpp"
#include "wire/encode.hpp"
#include "wire/layout.hpp"
#include "wire/outer.hpp"
#include "wire/parse.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace laps::wire {

// A DATA header's own values (the rest comes from the template).
struct data_fields {
    tables::path_id pid = 0;
    common::time_ns now = 0; // the send time, truncated to 48 bits on the wire
    std::uint32_t flow_id = 0;
    std::uint32_t seq = 0;
    std::uint16_t window_offset = 0;
    std::uint32_t epoch = 0;
    bool resend = false;
    bool pull = false; // flag_pull: the flow asks its receiver for a credit
};

// Where a receiver's CREDITs for one flow go and what they echo
// (docs/wire-format.md "CREDIT"), from the flow's latest DATA that asked for
// one: its source, entropy, pid, flow and epoch, its anchors reversed (the
// route its ACK took).
struct credit_route {
    std::uint32_t dst_ip = 0;
    std::uint16_t entropy = 0;
    tables::path_id pid = 0;
    std::uint8_t anchor_count = 0;
    std::array<std::uint32_t, max_anchors> anchors{};
    std::uint32_t flow_id = 0;
    std::uint32_t epoch = 0;
};
credit_route credit_route_of(const parsed_packet& data) noexcept;

class outer_template {
public:
    outer_template() = default;
    outer_template(const outer_config& cfg, packet_type type) noexcept;

    // The 42 outer bytes of a packet whose IPv4 total length is `ip_length`.
    void write(std::uint8_t* out, std::uint32_t dst_ip, std::uint16_t entropy, std::uint16_t ip_length) const noexcept;

private:
    std::array<std::uint8_t, outer_size> _bytes{};
    // One's-complement sum of the IPv4 header's 16-bit words with length,
    // checksum and destination at 0.
    std::uint32_t _fixed_sum = 0;
};

class header_writer {
public:
    header_writer() = default;
    // `authenticated`: every header announces the authentication trailer
    // (flag_authenticated, lengths that include it); the caller signs it
    // (wire/auth.hpp) once the header is written.
    explicit header_writer(const outer_config& cfg, bool authenticated = false) noexcept
        : _data(cfg, packet_type::data), _ack(cfg, packet_type::ack), _probe_ack(cfg, packet_type::probe_ack),
          _credit(cfg, packet_type::credit), _trailer(authenticated ? auth_size : 0), _flags(authenticated ? flag_authenticated : 0)
    {
    }

    // The bytes data() and answer() write for `anchor_count` anchors.
    std::size_t data_size(std::size_t anchor_count) const noexcept { return headers_size(anchor_count) + _trailer; }
    std::size_t answer_size(std::size_t anchor_count) const noexcept { return headers_size(anchor_count) + _trailer; }
    bool authenticated() const noexcept { return _trailer != 0; }

    // DATA with `anchors` (at most max_anchors) around a host frame of
    // `inner_length` bytes; returns data_size(anchors.size()).
    std::size_t data(std::uint8_t* out, std::uint32_t dst_ip, std::uint16_t entropy, const data_fields& f,
                     std::span<const std::uint32_t> anchors, std::uint16_t inner_length) const noexcept;

    // The ACK (PROBE_ACK for a PROBE) answering `received` at `now`, to its
    // sender on its reversed path: what ack_for() specifies. Returns
    // answer_size(received.header.anchor_count).
    std::size_t answer(std::uint8_t* out, const parsed_packet& received, common::time_ns now) const noexcept;

    // The bytes answer_run() writes for `anchor_count` anchors and `entries` entries.
    std::size_t answer_run_size(std::size_t anchor_count, std::size_t entries) const noexcept
    {
        return headers_size(anchor_count) + run_block_size(entries) + _trailer;
    }
    // The ACK_RUN (wire/ack_run.hpp) answering the DATA `first` and, in its
    // run block, `entries` (1..max_run_entries) more DATA of its flow and
    // path, all received at `now`. Returns answer_run_size(anchors, entries).
    std::size_t answer_run(std::uint8_t* out, const parsed_packet& first, common::time_ns now,
                           std::span<const run_entry> entries, std::uint32_t ecn_echo_bits) const noexcept;

    // Turns the ACK that answer() wrote at `out` (to `dst_ip` with
    // `entropy`, `anchor_count` anchors) into an ACK_RUN whose run block of
    // `entries` entries the caller has written after the anchors: type,
    // lengths, checksum and the block's header. Returns
    // answer_run_size(anchor_count, entries). The trailer, if any, is the
    // signer's to write after the block.
    std::size_t finish_run(std::uint8_t* out, std::uint32_t dst_ip, std::uint16_t entropy, std::size_t anchor_count,
                           std::size_t entries, std::uint32_t ecn_echo_bits) const noexcept;

    // The bytes credit() writes for `anchor_count` anchors.
    std::size_t credit_size(std::size_t anchor_count) const noexcept { return headers_size(anchor_count) + _trailer; }
    // The CREDIT granting its flow's `granted`-th DATA packet (a count from
    // 1, on the wire as `seq`) along `route`. Returns credit_size(route.anchor_count).
    std::size_t credit(std::uint8_t* out, const credit_route& route, std::uint32_t granted) const noexcept;

private:
    // The outer headers, fixed header and anchors of an answer of `type`
    // that is `size` bytes of headers in all.
    void write_answer(std::uint8_t* out, const parsed_packet& received, common::time_ns now, packet_type type,
                      std::size_t size) const noexcept;

    outer_template _data;
    outer_template _ack;
    outer_template _probe_ack;
    outer_template _credit;
    std::size_t _trailer = 0;
    std::uint8_t _flags = 0;
};

} // namespace laps::wire
