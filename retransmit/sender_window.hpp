#pragma once
// Loss detection and recovery at the sender: Alg. 3 and Fig. 5 of the paper.
//
// One window per flow. Every data packet gets the flow's next sequence number
// and a slot (seq mod capacity) holding an opaque handle (the engine keeps
// the mbuf there, zero-copy). Slots sent on the same path are chained in send
// order: the path's outstanding list, Fig. 5's per-path ring area.
//
// ACKs return on the reverse of their data packet's path, so on one path they
// arrive in order (§II-F). An ACK for seq x on path p therefore means every
// packet sent on p before x is lost: they are marked lost, to be resent in
// sequence before new data (next_lost), and x is released. A path whose ACKs
// stop for 2 x realVal times out: all its outstanding packets are lost
// (on_timeout; the engine owns the timers).
//
// A resend goes on any path (the selector picks again). If the "lost"
// original turns out to have arrived (its ACK comes later on a path it was
// sent on), the slot is released at once and the resend's ACK only moves its
// own path's order on: each ACK's outcome says which (released_late,
// resend_answered), and the engine counts them, so spurious retransmissions
// are visible. The window keeps no counters of its own: they would be a
// line written per packet for figures the engine already has.
//
// Only an ACK that answers a transmission the window records changes
// anything (docs/pipeline.md "Receiver guarantees"): a sequence number in
// [lowest_unacked, next_seq) on a path it was sent on. Every other ACK is
// classified in serial-number arithmetic against the window's real bounds,
// over the whole 32-bit space: `duplicate` for one of the last `capacity`
// sequence numbers released (a late copy), `unknown` for anything else, and
// `wrong_path`; the caller drops all three without using them.
//
// The capacity bounds the packets in flight per flow: when full() the sender
// stops taking new data from the host (backpressure, never a silent drop).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <type_traits>

namespace laps::retransmit {

using seq_t = std::uint32_t;

// Serial-number order (RFC 1982) so sequence numbers may wrap.
inline bool seq_before(seq_t a, seq_t b) noexcept
{
    return static_cast<std::int32_t>(a - b) < 0;
}

enum class ack_result : std::uint8_t {
    released,         // x was outstanding on this path: released (and earlier ones on the path lost)
    released_late,    // x had been declared lost or resent elsewhere; this ACK proves it arrived
    resend_answered,  // x's original was released first; this answers its resend on the resend's path
    duplicate,        // x was released within the last `capacity` sequence numbers: nothing changes
    unknown,          // x is neither in the window nor just behind it: nothing changes
    wrong_path,       // x is in the window, but was never sent on this path: nothing changes
};

// Whether an ACK with this result answers a transmission the window records
// (and so may move the path's timer, its latency and the flow's rate).
constexpr bool answers_transmission(ack_result r) noexcept
{
    return r == ack_result::released || r == ack_result::released_late || r == ack_result::resend_answered;
}

struct ack_outcome {
    ack_result result = ack_result::unknown;
    std::uint32_t newly_lost = 0; // packets this ACK proved lost
    bool has_handle = false;      // `handle` is released to the caller
    std::uint64_t handle = 0;
    // x's latest transmission was on the ACK's path: `sent_lo32` is the
    // low 32 bits of the time it was sent. The ACK may still answer an
    // earlier one (Karn): the caller checks the ACK's time_echo.
    bool has_send_time = false;
    bool was_resent = false;      // x has had more than one transmission
    std::uint32_t sent_lo32 = 0;
};

class sender_window {
    enum class slot_state : std::uint8_t {
        empty,       // released (or never used)
        outstanding, // in flight on `path`, linked in that path's list
        lost,        // waiting for a resend; not linked
        acked_linked // released early (late ACK) but still linked in `path`'s list
    };
    // Slot indices fit 16 bits: the capacity is at most max_capacity.
    static constexpr std::uint16_t none = 0xffff;

    struct slot {
        std::uint64_t handle = 0;
        seq_t seq = 0;
        std::uint32_t sent_lo32 = 0; // when it was last sent
        std::uint16_t next = none;   // next slot sent on the same path
        // Bit per path it was sent on: only those may answer it.
        std::uint16_t sent_paths = 0;
        std::uint8_t path = 0;       // the path it was last sent on
        slot_state state = slot_state::empty;
        bool was_resent = false; // an ACK on another path may then be an earlier transmission's
    };
    static_assert(sizeof(slot) == 24, "a window slot stays 24 bytes");
    struct path_list {
        std::uint16_t head = none;
        std::uint16_t tail = none;
        std::uint32_t count = 0;
    };
    // The destructor gives the arrays' memory back without destroying them.
    static_assert(std::is_trivially_destructible_v<slot> && std::is_trivially_destructible_v<path_list>);

public:
    static constexpr std::uint8_t max_paths = 16; // bits of slot::sent_paths
    // DATA carries seq - oldest unacknowledged in 16 bits (docs/wire-format.md).
    static constexpr std::uint32_t max_capacity = 32768;
    // Memory per packet of capacity (one slot), for models of memory use.
    static constexpr std::size_t bytes_per_packet = sizeof(slot);

    // `capacity` is rounded up to a power of two; `paths` <= max_paths is the
    // number of candidate paths of the flow's destination (slots in its set).
    // Throws std::invalid_argument beyond it, or beyond max_capacity.
    // `memory`: where the slots live (the worker's socket, in the app).
    sender_window(std::uint32_t capacity, std::uint8_t paths,
                  std::pmr::memory_resource* memory = std::pmr::get_default_resource());
    ~sender_window();
    sender_window(sender_window&& other) noexcept;
    sender_window(const sender_window&) = delete;
    sender_window& operator=(const sender_window&) = delete;
    sender_window& operator=(sender_window&&) = delete;

    bool full() const noexcept { return _next_seq - _base == _capacity; }
    std::uint32_t in_window() const noexcept { return _next_seq - _base; }
    std::uint32_t capacity() const noexcept { return _capacity; }
    seq_t next_seq() const noexcept { return _next_seq; }
    seq_t lowest_unacked() const noexcept { return _base; }
    std::uint32_t lost_pending() const noexcept { return _lost_count; }
    std::uint32_t outstanding_on(std::uint8_t path) const noexcept { return _paths[path].count; }
    bool idle() const noexcept { return _next_seq == _base; }

    // New data on `path`; precondition !full(). Returns its sequence number.
    // `sent_lo32`: the low 32 bits of the send time, for ack_outcome.
    seq_t send_new(std::uint8_t path, std::uint64_t handle, std::uint32_t sent_lo32 = 0) noexcept;

    // The oldest packet waiting for a resend, in sequence order. It stays in
    // the window (and keeps its handle) until resent and acknowledged.
    bool next_lost(seq_t& seq, std::uint64_t& handle) noexcept;
    // That packet was resent on `path`.
    void resent(seq_t seq, std::uint8_t path, std::uint32_t sent_lo32 = 0) noexcept;

    ack_outcome on_ack(seq_t seq, std::uint8_t path) noexcept;

    // No ACK on `path` for 2 x realVal: everything outstanding there is lost.
    std::uint32_t on_timeout(std::uint8_t path) noexcept;

    // Forget everything (a recycled flow slot); handles must have been drained.
    // The slots keep what they hold: only those of [lowest_unacked,
    // next_seq) are ever read (on_ack, next_lost, resent, drain) or linked
    // in a path's list, and send_new writes every field of a slot as it
    // enters that range. So a new flow writes its window's bounds and path
    // lists, not its capacity x 24 bytes (6 KB at the default 256 packets).
    void reset() noexcept
    {
        std::fill_n(_paths, _path_count, path_list{});
        _base = _next_seq = _lost_cursor = 0;
        _lost_count = 0;
    }

    // Visit every handle still held (flow teardown): the caller frees them.
    template <typename F>
    void drain(F&& release) noexcept
    {
        for (seq_t s = _base; s != _next_seq; ++s) {
            auto& slot = _slots[s & _mask];
            if (slot.state == slot_state::outstanding || slot.state == slot_state::lost) {
                release(slot.handle);
            }
            slot.state = slot_state::empty;
        }
        std::fill_n(_paths, _path_count, path_list{});
        _base = _next_seq;
        _lost_count = 0;
    }

private:

    void link(std::uint32_t index, std::uint8_t path) noexcept;
    std::uint32_t pop_head(std::uint8_t path) noexcept;
    void mark_lost(slot& s) noexcept;
    void advance_base() noexcept;

    // Two arrays from `_memory`, not two vectors: a flow's window is part
    // of its hot state (pipeline/flow_state.hpp), 56 bytes with these
    // pointers where two vectors took 64 for theirs alone.
    slot* _slots = nullptr;
    path_list* _paths = nullptr;
    std::pmr::memory_resource* _memory = nullptr;
    std::uint32_t _capacity = 0;
    std::uint32_t _mask = 0;
    seq_t _base = 0;     // lowest seq not yet released
    seq_t _next_seq = 0; // next new seq
    seq_t _lost_cursor = 0; // no lost slot before it
    std::uint32_t _lost_count = 0;
    std::uint8_t _path_count = 0;
};

static_assert(sizeof(sender_window) == 56, "a window stays within a line of its flow (pipeline/flow_state.hpp)");

} // namespace laps::retransmit
