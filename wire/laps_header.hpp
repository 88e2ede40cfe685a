#pragma once
// The LAPS header (docs/wire-format.md §3) as a plain struct in host byte
// order, and its byte-level read/write. Validation lives in parse.cpp; these
// functions trust their caller about sizes.

#include "tables/table_spec.hpp"
#include "wire/bytes.hpp"
#include "wire/layout.hpp"
#include "wire/time48.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace laps::wire {

enum class packet_type : std::uint8_t {
    data = 1,
    ack = 2,
    probe = 3,
    probe_ack = 4,
    // A coalesced ACK: the ACK of one DATA, then a run block answering more
    // DATA of the same flow and path (layout.hpp run_off, docs/wire-format.md).
    ack_run = 5,
    // A receiver-paced flow's credit (congestion.cc credit): the number of
    // DATA packets its receiver has granted so far (docs/wire-format.md "CREDIT").
    credit = 6,
};

std::string_view to_string(packet_type t) noexcept;

constexpr bool is_ack(packet_type t) noexcept
{
    return t == packet_type::ack || t == packet_type::probe_ack || t == packet_type::ack_run;
}

// The type an answer to `t` carries (ACK for DATA, PROBE_ACK for PROBE).
constexpr packet_type answer_type(packet_type t) noexcept
{
    return t == packet_type::probe ? packet_type::probe_ack : packet_type::ack;
}

// Flag bits (byte 1). Unknown bits are sent as 0 and ignored on receive.
inline constexpr std::uint8_t flag_ecn_echo = 0x01;   // ACK/PROBE_ACK: acked packet was CE-marked
inline constexpr std::uint8_t flag_retransmit = 0x02; // DATA: a resend
// Any type: the authentication trailer (layout.hpp auth_size) follows the anchors.
inline constexpr std::uint8_t flag_authenticated = 0x04;
// DATA of a receiver-paced flow: its sender asks the receiver for one more
// credit (it has more to send than it has credits and requests for).
inline constexpr std::uint8_t flag_pull = 0x08;
inline constexpr std::uint8_t known_flags = flag_ecn_echo | flag_retransmit | flag_authenticated | flag_pull;

// Bytes after the anchors that belong to the LAPS header's trailer.
constexpr std::size_t trailer_size(std::uint8_t flags) noexcept
{
    return (flags & flag_authenticated) != 0 ? auth_size : 0;
}

struct laps_header {
    packet_type type = packet_type::data;
    std::uint8_t flags = 0;
    std::uint8_t anchor_count = 0;
    // Next anchor to visit: 0 at the source, advanced by switches.
    std::uint8_t anchor_index = 0;
    tables::path_id pid = 0;
    // Raw 48 bits: a clock (DATA/PROBE) or a signed latency (ACK/PROBE_ACK).
    std::uint64_t time = 0;
    std::uint32_t flow_id = 0;
    std::uint32_t seq = 0;
    // DATA only: bytes of host frame after the header. Encoders fill it in.
    std::uint16_t inner_length = 0;
    // DATA only: seq minus the oldest sequence number the sender has not
    // seen acknowledged. Everything before seq - window_offset reached the
    // receiver, which may start a flow it does not know (or forgot) there.
    std::uint16_t window_offset = 0;
    // ACK/PROBE_ACK only (the same two bytes as window_offset): the frame
    // length of the packet answered, as it arrived, so that the sender can
    // tell a small probe's latency from a full frame's (clock offset
    // estimate, docs/pipeline.md).
    std::uint16_t acked_bytes = 0;
    // ACK/PROBE_ACK only (the two bytes DATA uses for inner_length): the low
    // 16 bits of the answered packet's `time`. They tell the sender which
    // transmission of a resent packet this answers, so that it can take a
    // round trip from every ACK (the clock offset's floor, docs/pipeline.md).
    std::uint16_t time_echo = 0;
    // The sender's incarnation (32 random bits per start of a sender): DATA
    // and PROBE carry the sender's, ACK and PROBE_ACK echo it, so that
    // neither side mistakes packets of another incarnation for its own, and
    // a receiver keys its flows by it (docs/wire-format.md "The epoch field").
    std::uint32_t epoch = 0;
    std::array<std::uint32_t, max_anchors> anchors{};
    // ACK_RUN only: the entries of its run block (the block itself stays in
    // the packet; wire/ack_run.hpp reads it).
    std::uint8_t run_entries = 0;

    // The header itself, with an ACK_RUN's run block (the trailer, when
    // authenticated, is trailer_size(flags) more).
    std::size_t size() const noexcept
    {
        return laps_size(anchor_count) + (type == packet_type::ack_run ? run_block_size(run_entries) : 0);
    }

    std::span<const std::uint32_t> anchor_list() const noexcept
    {
        return {anchors.data(), anchor_count <= max_anchors ? anchor_count : max_anchors};
    }

    // False (and nothing changed) when there are more than max_anchors.
    bool set_anchors(std::span<const std::uint32_t> list) noexcept
    {
        if (list.size() > max_anchors) {
            return false;
        }
        anchors = {};
        for (std::size_t i = 0; i < list.size(); ++i) {
            anchors[i] = list[i];
        }
        anchor_count = static_cast<std::uint8_t>(list.size());
        return true;
    }

    bool has_flag(std::uint8_t flag) const noexcept { return (flags & flag) != 0; }

    // ACK/PROBE_ACK: the measured one-way latency, signed.
    std::int64_t latency_ns() const noexcept { return sign_extend48(time); }

    bool operator==(const laps_header&) const = default;
};

// Headers a sender fills in. `now` is the local clock; anchors as the PIT has
// them (at most max_anchors; extra ones are cut, never written out of bounds).
laps_header make_data_header(tables::path_id pid, common::time_ns now, std::uint32_t flow_id,
                             std::uint32_t seq, std::span<const std::uint32_t> anchors,
                             bool retransmit = false, std::uint32_t epoch = 0) noexcept;
laps_header make_probe_header(tables::path_id pid, common::time_ns now, std::uint32_t probe_seq,
                              std::span<const std::uint32_t> anchors, std::uint32_t epoch = 0) noexcept;

// Writes the fixed part and the anchors at `out`: the caller checked the room
// and that anchor_count <= max_anchors. Reserved bytes and unknown flags are
// written as 0. An ACK_RUN's run block is wire/ack_run.hpp's to write.
void write_laps_header(std::uint8_t* out, const laps_header& h) noexcept;

// The fixed 28 bytes from their values, the one place that writes them
// (write_laps_header, and the data path's header_writer, which has no
// laps_header to fill). `at20`/`at22`: the two 16-bit fields whose meaning
// depends on the type (inner_length or time_echo; window_offset or
// acked_bytes); `flags` only known bits.
inline void write_laps_fixed(std::uint8_t* out, packet_type type, std::uint8_t flags, std::uint8_t anchor_count,
                             std::uint8_t anchor_index, tables::path_id pid, std::uint64_t time48,
                             std::uint32_t flow_id, std::uint32_t seq, std::uint16_t at20, std::uint16_t at22,
                             std::uint32_t epoch) noexcept
{
    out[laps_off::version_type] = static_cast<std::uint8_t>((laps_version << 4) | (static_cast<std::uint8_t>(type) & 0x0F));
    out[laps_off::flags] = flags & known_flags;
    out[laps_off::anchor_count] = anchor_count;
    out[laps_off::anchor_index] = anchor_index;
    store_be16(out + laps_off::pid, pid);
    store_be48(out + laps_off::time, time48);
    store_be32(out + laps_off::flow_id, flow_id);
    store_be32(out + laps_off::seq, seq);
    store_be16(out + laps_off::inner_length, at20);
    store_be16(out + laps_off::window_offset, at22);
    store_be32(out + laps_off::epoch, epoch);
}

// Reads the fixed part and min(anchor_count, max_anchors) anchors from `in`,
// which must hold that many bytes (an ACK_RUN's also its run block's count);
// no checks (see parse()). An ACK_RUN's entries stay in the packet
// (wire/ack_run.hpp).
void read_laps_header(const std::uint8_t* in, laps_header& h) noexcept;

} // namespace laps::wire
