// The other seeds' host-side policies on the LAPS engine (docs/design.md §3.10;
// softmax/policy.hpp, policy/, docs/pipeline.md "Other policies"). On a
// source-routed fabric an entropy is a path slot of the destination's set.
//   reps       per path set (the selector's state): slots recycled from
//              unmarked ACKs, a freeze after timeouts (seed 001);
//   hopper     one slot per flow, moved by its latency: LAPS's own probes
//              measure two random alternatives above th_prob, and the flow
//              moves above th_cong to one clearly faster (seed 002). The
//              delays are one-way (what LAPS ACKs carry), the base the
//              fastest path's uncongested latency; the PIT is the probe
//              table (a path measured within ttl counts as probed);
//   flowbender one slot per flow, a random other after a round of one RTT
//              with more than T of its ACKs ECN-echoed (Kabbani et al.);
//   selective  Eq. 1 spraying for elephants (bytes sent >= elephant_bytes,
//              or a DSCP the rule marks), one hashed slot for the rest (seed 004).
// Simplified: Hopper moves at once (the LAPS receiver's reorder buffer takes
// the difference) instead of waiting the latency difference.
#include "pipeline/send_side.hpp"

#include <span>

namespace laps::pipeline {

namespace {

// Hopper's probe store over the PIT (policy/hopper.hpp, Store).
class pit_probes {
public:
    pit_probes(const tables::path_table& table, const tables::path_set& set) : _table(table), _set(set) {}

    bool usable(std::uint16_t slot) const noexcept
    {
        return slot < _set.count && _table.path(_set.pids[slot]).usable();
    }
    bool answered(std::uint16_t slot, time_ns now, time_ns ttl, time_ns& delay) const noexcept
    {
        const auto& e = _table.path(_set.pids[slot]);
        if (now - e.time() > ttl) {
            return false;
        }
        delay = e.real();
        return true;
    }
    bool probed(std::uint16_t slot, time_ns now, time_ns ttl) const noexcept
    {
        return now - _table.path(_set.pids[slot]).time() <= ttl;
    }
    void probe_sent(std::uint16_t, time_ns) noexcept {}

private:
    const tables::path_table& _table;
    const tables::path_set& _set;
};

// The first usable slot from `slot` on (round robin); the set's count when none.
std::uint8_t usable_from(const tables::path_table& table, const tables::path_set& set, std::uint8_t slot) noexcept
{
    for (std::size_t k = 0; k < set.count; ++k) {
        const auto s = static_cast<std::uint8_t>((slot + k) % set.count);
        if (table.path(set.pids[s]).usable()) {
            return s;
        }
    }
    return static_cast<std::uint8_t>(set.count);
}

} // namespace

policy::hopper_config send_side::hopper_config_for(const send_flow& f) const noexcept
{
    auto c = _config.algo.selection.hopper;
    c.base_ns = f.hopper_base_ns;
    c.entropies = static_cast<std::uint16_t>(f.paths->count);
    return c;
}

void send_side::start_flow_policy(send_flow& f, std::uint8_t dscp) noexcept
{
    const auto& set = *f.paths;
    f.sent_bytes = 0;
    f.marked_elephant = ((_config.algo.selection.elephant_dscp >> (dscp & 63u)) & 1u) != 0;
    f.pinned_slot = set.count == 0 ? 0 : static_cast<std::uint8_t>(f.hash % set.count);
    f.hopper = policy::hopper_state{};
    f.hopper.current = f.pinned_slot;
    f.hopper_base_ns = policy::hopper_base_ns(std::span(set.pids.data(), set.count), [this](tables::path_id pid) {
        const auto& e = _table.path(pid);
        return static_cast<time_ns>(e.uncongested_ns > 0 ? e.uncongested_ns : e.base_ns);
    });
    auto bender = _config.algo.selection.flowbender;
    bender.entropies = static_cast<std::uint16_t>(set.count);
    f.bender = policy::flowbender(bender, f.pinned_slot);
}

softmax::choice send_side::other_policy_choice(send_flow& f, time_ns now) noexcept
{
    const auto policy = _selector.params().policy;
    if (policy == softmax::policy::reps) {
        return _selector.select_reps(_table, f.set, now);
    }
    if (policy == softmax::policy::selective &&
        (f.marked_elephant || f.sent_bytes >= _config.algo.selection.elephant_bytes)) {
        return _selector.select(_table, f.set, now, f.hash); // an elephant: Eq. 1
    }
    // One path for the flow: its pinned slot, or the next usable one.
    softmax::choice out;
    const auto& set = *f.paths;
    const std::uint8_t slot = usable_from(_table, set, f.pinned_slot);
    if (slot < set.count) {
        out.has_path = true;
        out.path = set.pids[slot];
        if (slot != f.pinned_slot && softmax::pins_flows(policy)) {
            f.pinned_slot = slot; // its path went down: the flow moves on
            f.hopper.current = slot;
        }
    }
    return out;
}

void send_side::policy_on_ack(send_flow& f, std::uint8_t slot, bool ecn_marked, time_ns rtt_ns, time_ns now) noexcept
{
    switch (_selector.params().policy) {
    case softmax::policy::reps:
        _selector.reps_ack(f.set, slot, ecn_marked);
        return;
    case softmax::policy::flowbender: {
        // A round lasts one RTT: the ACK's own, else twice the path's latency.
        const time_ns rtt = rtt_ns > 0 ? rtt_ns : 2 * _table.path(f.paths->pids[slot]).real();
        if (slot == f.pinned_slot && f.bender.on_ack(ecn_marked, rtt, now, _policy_rng)) {
            f.pinned_slot = static_cast<std::uint8_t>(f.bender.current());
            ++_counters.policy_repaths;
        }
        return;
    }
    default:
        return;
    }
}

void send_side::policy_on_timeout(send_flow& f, std::uint8_t slot, time_ns now) noexcept
{
    // Packets of `slot` timed out: REPS freezes; a flow pinned to it moves
    // (Hopper: to the best path measured within ttl; FlowBender: at random;
    // a selective mouse: to the next slot).
    switch (_selector.params().policy) {
    case softmax::policy::reps:
        _selector.reps_timeout(f.set, now);
        return;
    case softmax::policy::selective:
        // A mouse's one path timed out: the next slot (an elephant sprays by Eq. 1,
        // whose probing finds the failure).
        if (slot == f.pinned_slot && !f.marked_elephant && f.sent_bytes < _config.algo.selection.elephant_bytes &&
            f.paths->count > 1) {
            f.pinned_slot = static_cast<std::uint8_t>((slot + 1u) % f.paths->count);
            ++_counters.policy_repaths;
        }
        return;
    case softmax::policy::flowbender:
        if (slot == f.pinned_slot && f.bender.on_timeout(_policy_rng)) {
            f.pinned_slot = static_cast<std::uint8_t>(f.bender.current());
            ++_counters.policy_repaths;
        }
        return;
    case softmax::policy::hopper: {
        if (slot != f.pinned_slot) {
            return;
        }
        pit_probes store(_table, *f.paths);
        if (policy::hopper_on_timeout(hopper_config_for(f), f.hopper, store, now, _policy_rng).switched) {
            f.pinned_slot = static_cast<std::uint8_t>(f.hopper.current);
            ++_counters.policy_repaths;
        }
        return;
    }
    default:
        return;
    }
}

void send_side::policy_on_sample(send_flow& f, std::uint8_t slot, time_ns now) noexcept
{
    if (_selector.params().policy != softmax::policy::hopper) {
        return;
    }
    pit_probes store(_table, *f.paths);
    const time_ns sample = _table.path(f.paths->pids[slot]).real();
    const auto d = policy::hopper_on_sample(hopper_config_for(f), f.hopper, store, slot, sample, now, _policy_rng);
    for (std::uint8_t i = 0; i < d.probes; ++i) {
        send_probe(f.paths->pids[d.probe[i]], f, now);
    }
    if (d.switched) {
        f.pinned_slot = static_cast<std::uint8_t>(d.entropy);
        ++_counters.policy_repaths;
    }
}

} // namespace laps::pipeline
