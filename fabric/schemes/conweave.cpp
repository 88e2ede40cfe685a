#include "fabric/schemes/conweave.hpp"

#include "fabric/schemes/node_random.hpp"
#include "fabric/simulation.hpp"
#include "fabric/units.hpp"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <vector>

namespace laps::fabric::schemes {

namespace {

// The artefact's flags on DATA (ConWeaveDataTag); a reply carries INIT or TAIL.
enum flag : std::uint8_t { data_flag = 1, init_flag = 2, tail_flag = 3 };

// ConWeave's fields on a packet: DATA's tag, and a control message's content.
struct cw_header {
    std::uint8_t flag = 0;
    std::uint8_t phase = 0;
    bool released = false; // left the destination ToR's reorder queue
    bool notify = false;   // a control message: NOTIFY (else RTT_REPLY or CLEAR)
    std::uint32_t epoch = 0;
    time_ns tx_ns = 0;
    time_ns tail_ns = 0;
};

// The source ToR's state of a flow (conweaveTxState).
struct tx_state {
    bool init = false;
    bool stabilized = true;
    time_ns active = 0;
    time_ns reply_deadline = 0;
    std::uint32_t epoch = 0;
    std::uint8_t phase = 0;
    std::uint16_t path = hosts::no_pid; // index into the candidate set
    time_ns tail_ns = 0;
};

// The destination ToR's state of a flow (conweaveRxState) and its reorder queue.
struct rx_state {
    bool init = false;
    std::uint32_t epoch = 1;
    std::uint8_t phase = 0;
    time_ns phase0_tx = 0;
    time_ns phase0_rx = 0;
    bool phase0_cache = false;
    time_ns tail_ns = 0;
    bool reordering = false;
    std::deque<std::uint32_t> voq; // held packet records, in arrival order
    topology::node_id tor = topology::no_node;
    std::uint32_t flush_gen = 0;
    bool flush_by_tail = false;
};

enum counter : std::size_t { reroutes, replies, notifies, held, held_max, flush_by_tail, flush_by_timer };

class conweave final : public scheme {
public:
    explicit conweave(simulation& sim)
        : scheme(sim), _params(sim.config().scheme_params.get<conweave_params>("conweave")),
          _tx(sim.flows().size()), _rx(sim.flows().size()), _random(sim.seed(), sim.topology().node_count())
    {
    }

    std::uint16_t choose_path(packet& k, topology::node_id at, const candidate_set& cs) override
    {
        return _sim.tor_of(k.roce.src) == _sim.tor_of(k.dst) ? 0 : source(k, at, cs);
    }

    bool at_destination_tor(std::uint32_t i, topology::node_id at) override
    {
        return !header_of<cw_header>(_sim.packets()[i]).released && destination(i, at);
    }

    void on_control(const packet& k, topology::node_id) override;

    // The flush timer of flow `flow`'s reorder queue (arg: its generation).
    void on_timer(std::uint32_t flow, std::uint32_t gen) override
    {
        auto& rx = _rx[flow];
        if (gen != rx.flush_gen || !rx.reordering) {
            return;
        }
        flush(flow, rx.flush_by_tail);
    }

    void release() override
    {
        for (auto& rx : _rx) {
            for (const auto i : rx.voq) {
                _sim.packets().release(i); // RoCE records: no mbuf
            }
            rx.voq.clear();
        }
    }

    std::span<const std::uint64_t> counts() const noexcept override { return _counts; }

    std::string note() const override
    {
        if (_counts[reroutes] + _counts[held] == 0) {
            return {};
        }
        return "; ConWeave " + std::to_string(_counts[reroutes]) + " reroutes, " + std::to_string(_counts[held]) +
               " held (max " + std::to_string(_counts[held_max]) + " per flow)";
    }

private:
    std::uint16_t source(packet& k, topology::node_id tor, const candidate_set& cs);
    bool destination(std::uint32_t i, topology::node_id at);
    void send(const packet& data, topology::node_id at, bool notify, std::uint8_t flag, std::uint8_t phase);
    void flush(std::uint32_t flow, bool by_tail);

    conweave_params _params;
    std::vector<tx_state> _tx; // per flow
    std::vector<rx_state> _rx; // per flow
    std::unordered_map<std::uint64_t, time_ns> _paused; // route -> no new flows on it before this
    node_random _random;
    std::array<std::uint64_t, conweave_counters.size()> _counts{};
};

std::uint16_t conweave::source(packet& k, topology::node_id tor, const candidate_set& cs)
{
    // conweave-routing.cc RouteInput, source ToR: a new epoch (RTT_REQUEST,
    // flag INIT) when the flow was idle past tx_expiry or the last epoch is
    // settled; if no RTT_REPLY came by base RTT + extra, the next packet is the
    // TAIL of the old path and the flow moves to a new path (phase 1).
    const time_ns now = _sim.now();
    auto& tx = _tx[k.flow];
    const bool fresh = !tx.init;
    tx.init = true;
    bool expired = false;
    bool stabilized = false;
    bool timeout = false;
    if (fresh || tx.active + _params.tx_expiry_ns < now) {
        expired = true;
        tx.stabilized = false;
    } else if (tx.stabilized) {
        stabilized = true;
        tx.stabilized = false;
    }
    tx.active = now;
    if (expired || stabilized) {
        tx.reply_deadline = now + cs.base_rtt_ns + _params.extra_reply_deadline_ns;
    } else if (tx.reply_deadline < now) {
        tx.reply_deadline = no_time;
        timeout = true;
    }
    if (expired || stabilized) {
        ++tx.epoch;
    }
    std::uint8_t phase = tx.phase;
    if (expired || stabilized) {
        tx.phase = 0;
        phase = 0;
    } else if (timeout) {
        tx.phase = 1;
        phase = 0;
    }
    // Path-aware choice: two random candidates, the first not paused by a NOTIFY.
    const auto n = static_cast<std::uint32_t>(cs.paths.size());
    const auto r1 = static_cast<std::uint16_t>(_random[tor].below(n));
    const auto r2 = static_cast<std::uint16_t>(_random[tor].below(n));
    const auto paused = [&](std::uint16_t j) {
        const auto it = _paused.find(cs.paths[j].route);
        return it != _paused.end() && it->second > now;
    };
    bool found = true;
    std::uint16_t good = r1;
    if (paused(r1)) {
        if (!paused(r2)) {
            good = r2;
        } else {
            found = false;
        }
    }
    if (tx.path == hosts::no_pid) {
        tx.path = good;
    }
    std::uint16_t current = tx.path;
    if (expired) {
        if (found) {
            if (!fresh && good != tx.path) {
                ++_path_changes;
            }
            tx.path = good;
        }
        current = tx.path;
    } else if (timeout) {
        current = tx.path; // the TAIL goes on the old path
        if (found) {
            if (good != tx.path) {
                ++_path_changes;
            }
            ++_counts[reroutes];
            tx.path = good;
        }
    }
    if (expired || stabilized) {
        tx.tail_ns = 0;
    } else if (timeout) {
        tx.tail_ns = now;
    }
    auto h = header_of<cw_header>(k);
    h.flag = (expired || stabilized) ? init_flag : timeout ? tail_flag : data_flag;
    h.phase = phase;
    h.epoch = tx.epoch;
    h.tx_ns = now;
    h.tail_ns = tx.tail_ns;
    set_header(k, h);
    return current;
}

bool conweave::destination(std::uint32_t i, topology::node_id at)
{
    // conweave-routing.cc RouteInput, destination ToR: packets of the new path
    // (phase 1) that arrive before the old path's TAIL wait in a reorder queue
    // until the TAIL arrives or until the predicted time passes.
    const time_ns now = _sim.now();
    const packet& k = _sim.packets()[i];
    const auto h = header_of<cw_header>(k);
    auto& rx = _rx[k.flow];
    rx.init = true;
    rx.tor = at;
    int match = 0; // 0 current epoch, 1 new, 2 previous
    if (rx.epoch < h.epoch) {
        rx.epoch = h.epoch;
        match = 1;
    } else if (rx.epoch > h.epoch) {
        match = 2;
    }
    if (match == 2) {
        return false;
    }
    if (h.phase == 0) {
        rx.phase0_tx = h.tx_ns;
        rx.phase0_rx = now;
    }
    bool ooo = false;
    bool cache = false;
    if (match == 1) {
        rx.phase = h.flag == tail_flag ? 1 : 0;
        ooo = h.phase > rx.phase;
        rx.phase0_cache = h.phase == 0;
        cache = rx.phase0_cache;
    } else {
        if (h.flag == tail_flag) {
            if (!rx.reordering) {
                rx.phase = 1;
            }
        } else if (rx.phase < h.phase) {
            ooo = true;
        }
        if (h.phase == 0) {
            rx.phase0_cache = true;
        }
        cache = rx.phase0_cache;
    }
    if (h.flag == tail_flag || h.phase == 1) {
        rx.tail_ns = h.tail_ns;
    }
    // When the TAIL should arrive: its send time minus the old path's last
    // send time after that packet's arrival, plus slack.
    const time_ns gap = cache ? std::max<time_ns>(0, rx.tail_ns - rx.phase0_tx) : _params.default_voq_wait_ns;
    time_ns flush_at = 0;
    bool by_tail = false;
    if (h.phase == 1) {
        if (ooo) {
            flush_at = (cache ? rx.phase0_rx : now) + gap + _params.extra_voq_flush_ns;
        }
    } else if (h.flag == tail_flag) {
        flush_at = now + 1;
        by_tail = true;
    } else {
        flush_at = now + gap + _params.extra_voq_flush_ns;
    }
    bool hold = false;
    if (h.phase == 0) {
        if (rx.reordering) {
            ++rx.flush_gen;
            rx.flush_by_tail = by_tail;
            _sim.schedule().push(std::max(now, flush_at), event_kind::scheme_timer, k.flow, rx.flush_gen);
        }
    } else if (ooo) {
        hold = true;
        if (!rx.reordering) {
            rx.reordering = true;
            ++rx.flush_gen;
            rx.flush_by_tail = false;
            _sim.schedule().push(std::max(now, flush_at), event_kind::scheme_timer, k.flow, rx.flush_gen);
        }
    }
    const packet data = k; // the sends below may move the record
    if (data.ce) {
        send(data, at, true, 0, 0); // the path saw ECN: pause it at the source
    }
    if (h.flag == init_flag) {
        send(data, at, false, init_flag, 0); // RTT_REPLY
    } else if (h.flag == tail_flag) {
        send(data, at, false, tail_flag, 1); // CLEAR
    }
    if (hold) {
        // The queue holds the packet in the ToR's shared buffer.
        auto& node = _sim.nodes()[at];
        node.buffered += data.bytes;
        node.max_buffered = std::max(node.max_buffered, node.buffered);
        rx.voq.push_back(i);
        ++_counts[held];
        _counts[held_max] = std::max<std::uint64_t>(_counts[held_max], rx.voq.size());
    }
    return hold;
}

void conweave::send(const packet& data, topology::node_id at, bool notify, std::uint8_t flag, std::uint8_t phase)
{
    // ConWeave's control uses the (N)ACK class.
    auto& packets = _sim.packets();
    const std::uint32_t i = hosts::new_control(packets, roce_op::switch_control, packet_class::plain, true, data.dst,
                                               _sim.tor_of(data.roce.src), data.flow);
    packet& c = packets[i];
    cw_header h;
    h.flag = flag;
    h.phase = phase;
    h.notify = notify;
    h.epoch = header_of<cw_header>(data).epoch;
    set_header(c, h);
    c.roce.route = data.roce.route;
    ++_counts[notify ? notifies : replies];
    _sim.forward(i, at);
}

void conweave::on_control(const packet& k, topology::node_id)
{
    const auto h = header_of<cw_header>(k);
    const time_ns now = _sim.now();
    if (h.notify) {
        _paused[k.roce.route] = now + _params.path_pause_ns;
        return;
    }
    auto& tx = _tx[k.flow];
    if (h.epoch != tx.epoch || h.phase != tx.phase) {
        return;
    }
    if (h.flag == init_flag) {
        if (now < tx.reply_deadline && tx.reply_deadline != no_time) {
            tx.stabilized = true; // the path answered in time: keep it, start a new epoch
            tx.reply_deadline = no_time;
        }
    } else if (h.flag == tail_flag) {
        tx.stabilized = true; // reordering of this reroute is over
        tx.reply_deadline = no_time;
    }
}

void conweave::flush(std::uint32_t flow, bool by_tail)
{
    auto& rx = _rx[flow];
    ++_counts[by_tail ? flush_by_tail : flush_by_timer];
    rx.reordering = false;
    rx.phase = 1;
    std::deque<std::uint32_t> queue;
    queue.swap(rx.voq);
    auto& packets = _sim.packets();
    for (const auto i : queue) {
        packet& k = packets[i];
        _sim.nodes()[rx.tor].buffered -= k.bytes;
        auto h = header_of<cw_header>(k);
        h.released = true;
        set_header(k, h);
        _sim.forward(i, rx.tor);
    }
}

} // namespace

std::unique_ptr<scheme> make_conweave(simulation& sim)
{
    return std::make_unique<conweave>(sim);
}

std::any parse_conweave_params(const config::reader& r, const YAML::Node& n)
{
    const std::string k = "roce.conweave";
    conweave_params p;
    r.expect_map(n, k,
                 {"extra_reply_deadline_us", "path_pause_us", "extra_voq_flush_us", "default_voq_wait_us",
                  "tx_expiry_us"});
    optional_us(r, n, k, "extra_reply_deadline_us", p.extra_reply_deadline_ns, false);
    optional_us(r, n, k, "path_pause_us", p.path_pause_ns, false);
    optional_us(r, n, k, "extra_voq_flush_us", p.extra_voq_flush_ns, false);
    optional_us(r, n, k, "default_voq_wait_us", p.default_voq_wait_ns);
    optional_us(r, n, k, "tx_expiry_us", p.tx_expiry_ns);
    return p;
}

} // namespace laps::fabric::schemes
