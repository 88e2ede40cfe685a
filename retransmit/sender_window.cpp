#include "retransmit/sender_window.hpp"

#include <algorithm>
#include <bit>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace laps::retransmit {

sender_window::sender_window(std::uint32_t capacity, std::uint8_t paths, std::pmr::memory_resource* memory)
    : _memory(memory), _capacity(std::bit_ceil(capacity < 2 ? 2u : capacity)), _mask(_capacity - 1),
      _path_count(paths)
{
    if (paths > max_paths) {
        throw std::invalid_argument("sender_window: " + std::to_string(paths) + " paths, at most " +
                                    std::to_string(max_paths));
    }
    if (_capacity > max_capacity) {
        throw std::invalid_argument("sender_window: " + std::to_string(capacity) + " packets, at most " +
                                    std::to_string(max_capacity));
    }
    _slots = static_cast<slot*>(_memory->allocate(sizeof(slot) * _capacity, alignof(slot)));
    std::uninitialized_fill_n(_slots, _capacity, slot{});
    if (_path_count > 0) {
        try {
            _paths = static_cast<path_list*>(_memory->allocate(sizeof(path_list) * _path_count, alignof(path_list)));
        } catch (...) {
            _memory->deallocate(_slots, sizeof(slot) * _capacity, alignof(slot));
            throw;
        }
        std::uninitialized_fill_n(_paths, _path_count, path_list{});
    }
}

sender_window::sender_window(sender_window&& other) noexcept
    : _slots(std::exchange(other._slots, nullptr)), _paths(std::exchange(other._paths, nullptr)),
      _memory(other._memory), _capacity(other._capacity), _mask(other._mask), _base(other._base),
      _next_seq(other._next_seq), _lost_cursor(other._lost_cursor), _lost_count(other._lost_count),
      _path_count(other._path_count)
{
}

sender_window::~sender_window()
{
    // slot and path_list are trivially destructible: only the memory goes back.
    if (_slots != nullptr) {
        _memory->deallocate(_slots, sizeof(slot) * _capacity, alignof(slot));
    }
    if (_paths != nullptr) {
        _memory->deallocate(_paths, sizeof(path_list) * _path_count, alignof(path_list));
    }
}

void sender_window::link(std::uint32_t index, std::uint8_t path) noexcept
{
    auto& list = _paths[path];
    _slots[index].next = none;
    _slots[index].path = path;
    _slots[index].sent_paths |= static_cast<std::uint16_t>(1u << path);
    const auto at = static_cast<std::uint16_t>(index); // < max_capacity
    if (list.tail == none) {
        list.head = at;
    } else {
        _slots[list.tail].next = at;
    }
    list.tail = at;
    ++list.count;
}

std::uint32_t sender_window::pop_head(std::uint8_t path) noexcept
{
    auto& list = _paths[path];
    const std::uint32_t index = list.head;
    list.head = _slots[index].next;
    if (list.head == none) {
        list.tail = none;
    }
    --list.count;
    _slots[index].next = none;
    return index;
}

void sender_window::mark_lost(slot& s) noexcept
{
    s.state = slot_state::lost;
    ++_lost_count;
    if (seq_before(s.seq, _lost_cursor)) {
        _lost_cursor = s.seq;
    }
}

void sender_window::advance_base() noexcept
{
    while (_base != _next_seq && _slots[_base & _mask].state == slot_state::empty) {
        ++_base;
    }
    if (seq_before(_lost_cursor, _base)) {
        _lost_cursor = _base;
    }
}

seq_t sender_window::send_new(std::uint8_t path, std::uint64_t handle, std::uint32_t sent_lo32) noexcept
{
    const seq_t seq = _next_seq++;
    const std::uint32_t index = seq & _mask;
    auto& s = _slots[index];
    s.handle = handle;
    s.sent_lo32 = sent_lo32;
    s.seq = seq;
    s.was_resent = false;
    s.state = slot_state::outstanding;
    s.sent_paths = 0;
    link(index, path);
    return seq;
}

bool sender_window::next_lost(seq_t& seq, std::uint64_t& handle) noexcept
{
    if (_lost_count == 0) {
        return false;
    }
    for (seq_t s = _lost_cursor; s != _next_seq; ++s) {
        const auto& slot = _slots[s & _mask];
        if (slot.state == slot_state::lost) {
            _lost_cursor = s;
            seq = s;
            handle = slot.handle;
            return true;
        }
    }
    return false; // unreachable while _lost_count is exact
}

void sender_window::resent(seq_t seq, std::uint8_t path, std::uint32_t sent_lo32) noexcept
{
    const std::uint32_t index = seq & _mask;
    auto& s = _slots[index];
    if (s.state != slot_state::lost || s.seq != seq) {
        return;
    }
    --_lost_count;
    s.state = slot_state::outstanding;
    s.was_resent = true;
    s.sent_lo32 = sent_lo32;
    link(index, path);
}

ack_outcome sender_window::on_ack(seq_t seq, std::uint8_t path) noexcept
{
    ack_outcome out;
    if (path >= _path_count) {
        return out;
    }
    // Unsigned distances from the window's real bounds: correct wherever the
    // window sits in the 32-bit space, and for every seq (no "half behind").
    if (seq - _base >= _next_seq - _base) {
        // A flow's sequence numbers start at 0 (reset()), so _base of them
        // were released: the last `capacity` of those are duplicates.
        const std::uint32_t behind = _base - seq; // 1 for the last one released
        // Anything else is unknown (the outcome's default).
        if (behind - 1 < std::min(_capacity, _base)) {
            out.result = ack_result::duplicate;
        }
        return out;
    }
    const std::uint32_t index = seq & _mask;
    auto& s = _slots[index];
    const bool sent_on_path = (s.sent_paths >> path) & 1u;
    switch (s.state) {
    case slot_state::empty:
        out.result = ack_result::duplicate;
        return out;
    case slot_state::lost:
        if (!sent_on_path) {
            out.result = ack_result::wrong_path;
            return out;
        }
        // Declared lost, not yet resent, yet it arrived.
        --_lost_count;
        s.state = slot_state::empty;
        out.result = ack_result::released_late;
        out.has_handle = true;
        out.handle = s.handle;
        out.has_send_time = true;
        out.was_resent = s.was_resent;
        out.sent_lo32 = s.sent_lo32;
        advance_base();
        return out;
    case slot_state::acked_linked:
        if (s.path != path) {
            out.result = sent_on_path ? ack_result::duplicate : ack_result::wrong_path;
            return out;
        }
        break; // the resend's ACK on its own path: unlink below, no handle
    case slot_state::outstanding:
        if (!sent_on_path) {
            out.result = ack_result::wrong_path;
            return out;
        }
        if (s.path != path) {
            // The original of a resend was delivered after all: release now,
            // unlink lazily when the resend's path is walked.
            s.state = slot_state::acked_linked;
            out.result = ack_result::released_late;
            out.has_handle = true;
            out.handle = s.handle;
            return out;
        }
        break;
    }

    // Walk this path's list up to x: everything sent on it before x is lost.
    for (;;) {
        const std::uint32_t head = pop_head(path);
        auto& h = _slots[head];
        if (head == index) {
            break;
        }
        if (h.state == slot_state::outstanding) {
            mark_lost(h);
            ++out.newly_lost;
        } else { // acked_linked: already released
            h.state = slot_state::empty;
        }
    }
    if (s.state == slot_state::outstanding) {
        out.result = ack_result::released;
        out.has_handle = true;
        out.handle = s.handle;
        out.has_send_time = true;
        out.was_resent = s.was_resent;
        out.sent_lo32 = s.sent_lo32;
    } else {
        // acked_linked: the resend's ACK on the resend's path; the slot was
        // released by its original's. It answers a transmission the window
        // recorded, and it has just moved this path's order on.
        out.result = ack_result::resend_answered;
        out.has_send_time = true;
        out.was_resent = true;
        out.sent_lo32 = s.sent_lo32;
    }
    s.state = slot_state::empty;
    advance_base();
    return out;
}

std::uint32_t sender_window::on_timeout(std::uint8_t path) noexcept
{
    std::uint32_t lost = 0;
    while (_paths[path].count > 0) {
        auto& h = _slots[pop_head(path)];
        if (h.state == slot_state::outstanding) {
            mark_lost(h);
            ++lost;
        } else {
            h.state = slot_state::empty;
        }
    }
    advance_base();
    return lost;
}

} // namespace laps::retransmit
