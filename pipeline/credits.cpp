// Receiver-paced credits (congestion.cc credit; docs/congestion.md
// "Receiver-paced credits", after EQDS, NSDI 2022): each DATA that asks for
// a credit (flag_pull) is owed one. Each receiving port paces its credits so
// that the DATA they call arrive at rate_fraction of the port's rate, and
// gives each turn to the flow granted least so far among those it can send
// a credit (those with a DATA that asked through it): a flow that can reach
// one port only (a one-path sender) is not outrun by flows that reach
// several, and flows end together (max-min fair over the ports). A CREDIT
// names the path of the latest DATA that asked through its port, and the
// sender sends the DATA it calls there, so each port gets what its own
// credits call.
//
// A CREDIT carries the count of credits granted to its flow so far, not one
// grant: a lost CREDIT is made good by the next, and a sender takes a count
// only up to the DATA it asked for (send_side::on_credit).
#include "pipeline/receive_side.hpp"
#include "wire/mbuf_build.hpp"

#include <algorithm>
#include <functional>

namespace laps::pipeline {

namespace {
// Turns a late pacer makes up at once (a receive burst): a count, which
// multiplies a turn's length.
constexpr std::int64_t max_credit_lag_turns = 32;
} // namespace

void receive_side::queue_turn(std::uint32_t port, std::uint32_t index) noexcept
{
    auto& pacer = _credit_pacers[port];
    pacer.queue.push_back(credit_turn{_flows[index].granted, pacer.order++, index}); // reserved: no allocation
    std::push_heap(pacer.queue.begin(), pacer.queue.end(), std::greater<credit_turn>{});
    _flows[index].credit_ports[port].queued = true;
    ++_credits_owed;
}

void receive_side::owe_credit(std::uint32_t index, const rte_mbuf* m, const wire::parsed_packet& p,
                              time_ns now) noexcept
{
    ++_counters.credit_pull_rx;
    auto& r = _flows[index];
    // A first transmission's PULL on seq s asks for every sequence number
    // up to s, so the request of a lost DATA comes with the next one; a
    // resend's asks for one more. The first request is granted the window
    // past the unscheduled bytes too, at the pace of every other credit (its
    // sender accepts as many).
    if (r.pulls == 0) {
        r.window_grants = congestion::credit_window_grants(_config.algo.congestion.aimd.credit, p.frame_length);
        r.pulls = r.window_grants;
    }
    if (p.header.has_flag(wire::flag_retransmit)) {
        ++r.pulls;
    } else if (const std::uint32_t upto = p.header.seq - r.credit_start + 1;
               static_cast<std::int32_t>(upto - r.seq_upto) > 0) {
        r.pulls += upto - r.seq_upto;
        r.seq_upto = upto;
    }
    auto& here = r.credit_ports[m->port % _credit_ports];
    here.routed = true;
    here.pull_bytes = p.frame_length;
    here.route = wire::credit_route_of(p); // the latest path into this port: the hint
    for (std::uint32_t port = 0; port < _credit_ports; ++port) {
        if (r.credit_ports[port].routed && !r.credit_ports[port].queued) {
            auto& pacer = _credit_pacers[port];
            if (pacer.count() == 0) {
                // An idle port owes nothing for the time it was idle: its
                // turns start now (a late poll's catching up is for a busy one).
                pacer.next_at = std::max(pacer.next_at, now);
            }
            queue_turn(port, index);
        }
    }
}

time_ns receive_side::next_credit(time_ns now) const noexcept
{
    time_ns next = std::numeric_limits<time_ns>::max();
    for (std::uint32_t port = 0; port < _credit_ports; ++port) {
        if (_credit_pacers[port].count() != 0) {
            next = std::min(next, std::max(now, _credit_pacers[port].next_at));
        }
    }
    return next;
}

void receive_side::grant_credits(time_ns now) noexcept
{
    const std::greater<credit_turn> later;
    for (std::uint32_t port = 0; port < _credit_ports; ++port) {
        auto& pacer = _credit_pacers[port];
        while (pacer.count() != 0 && now >= pacer.next_at) {
            const credit_turn top = pacer.queue.front();
            std::pop_heap(pacer.queue.begin(), pacer.queue.end(), later);
            pacer.queue.pop_back();
            --_credits_owed;
            auto& r = _flows[top.flow];
            auto& c = r.credit_ports[port];
            c.queued = false;
            if (!r.active || static_cast<std::int32_t>(r.pulls - r.granted) <= 0 || !c.routed) {
                continue; // forgotten, owed nothing (any more), or a new flow in the slot
            }
            if (static_cast<std::int32_t>(r.granted - r.arrived) >= static_cast<std::int32_t>(r.window_grants)) {
                // Its credits are a window ahead of its DATA: they wait in a
                // queue that this port's pace does not see (item 9 of
                // docs/congestion.md "Receiver-paced credits"). The next of
                // its DATA that asks for a credit queues it again
                // (owe_credit); one that waits for a credit falls back to
                // its rate after fallback_us and asks then.
                ++_counters.credit_held;
                continue;
            }
            if (top.granted != r.granted) {
                queue_turn(port, top.flow); // granted more on another port since: its place moves
                continue;
            }
            rte_mbuf* credit = wire::build_credit(_config.control_pool, _headers, c.route, r.granted + 1);
            if (credit == nullptr) {
                ++_counters.credit_drop_no_mbuf;
                queue_turn(port, top.flow); // still owed: the next poll tries again
                break;
            }
            sign_laps(credit, wire::laps_size(c.route.anchor_count));
            ++r.granted;
            ++_counters.credit_sent;
            stage_to_fabric(credit);
            // The turn lasts as long as the DATA it calls takes on the port.
            // A pacer that fell behind (a poll late by a worker's burst, or
            // a descheduled lcore) catches up at most max_credit_lag_turns
            // at once: the DATA they call arrive as one burst, which a
            // receive burst's worth keeps within a port's queue.
            const auto turn = static_cast<time_ns>(static_cast<double>(c.pull_bytes) * _credit_ns_per_byte);
            pacer.next_at = std::max(pacer.next_at, now - max_credit_lag_turns * turn) + turn;
            if (static_cast<std::int32_t>(r.pulls - r.granted) > 0) {
                queue_turn(port, top.flow);
            }
        }
    }
}

void receive_side::charge_credit_pacer(const rte_mbuf* m, std::uint32_t bytes) noexcept
{
    auto& pacer = _credit_pacers[m->port % _credit_ports];
    if (pacer.count() == 0) {
        return; // an idle port has room for it
    }
    // Owed credits: its turns run back to back from next_at, which a poll
    // may not have reached yet (`now` past it); the turn due moves back.
    pacer.next_at += static_cast<time_ns>(static_cast<double>(bytes) * _credit_ns_per_byte);
    ++_counters.credit_port_charged;
}

} // namespace laps::pipeline
