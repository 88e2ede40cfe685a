#pragma once
// A packet inside the emulated fabric: the mbuf chain an engine sent, plus
// what the switches need to forward it, parsed once when it enters the fabric.
//
// Records live in one slab and are recycled through a free list; port queues
// chain them through `next`, so queueing allocates nothing.

#include "common/time.hpp"
#include "tables/table_spec.hpp"
#include "topology/model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

struct rte_mbuf;

namespace laps::fabric {

using common::time_ns;

inline constexpr std::uint32_t no_packet = 0xffffffffu;
inline constexpr std::uint32_t no_flow = 0xffffffffu;

// What a packet is, for counters and drop accounting.
enum class packet_class : std::uint8_t { data, ack, probe, probe_ack, plain };
inline constexpr std::size_t packet_class_count = 5;

// Whose packet it is: the switches treat all alike (queues, buffers, PFC,
// ECN); only forwarding and delivery look at it.
enum class carrier : std::uint8_t {
    plain, // IPv4 the LAPS engine passed through: ECMP by 5-tuple
    laps,  // LAPS (mbuf chain, anchors in the header)
    roce,  // the RoCEv2 NIC model's packets (records only, no mbuf: fabric/hosts/roce_nic.hpp)
};

// RoCE packet kinds.
enum class roce_op : std::uint8_t {
    data,
    ack,            // cumulative ACK (AETH), may flag a CNP and echo ECN
    nack,           // Go-Back-N NACK / IRN selective NACK, may flag a CNP
    probe,          // a probe on an alternative entropy, host -> host
    probe_reply,    // its answer, echoing entropy and send time
    switch_control, // a scheme's message from one switch to another (fabric/schemes/)
};

// Room for the header of the run's scheme (fabric/schemes/scheme.hpp,
// header_of): what its switches write on a packet and read further on
// (ConWeave's, the largest, takes 24).
inline constexpr std::size_t scheme_header_bytes = 24;

// What the RoCE NIC model's packets carry besides the fabric's fields: their
// headers (BTH, AETH), the path their source ToR chose, and the model's
// bookkeeping. The QP is the testbed flow (packet::flow).
struct roce_fields {
    topology::node_id src = topology::no_node;     // sending host (ACKs: the data's receiver)
    std::uint32_t psn = 0;                         // DATA: its PSN (frame index); ACK/NACK: next expected
    std::uint32_t sack = 0;                        // IRN NACK: the PSN that arrived out of order
    // DATA: the candidate path chosen, in the source's table; before its
    // source ToR routes it, a host-side scheme's choice (an index into the candidates).
    std::uint16_t pid = 0xffff;
    roce_op op = roce_op::data;
    bool routed = false;                           // a path (anchors) was chosen for it
    bool ecn_echo = false;                         // ACK/NACK: the acknowledged DATA was CE-marked
    bool cnp = false;                              // ACK/NACK: carries a CNP (DCQCN notification point)
    bool has_sack = false;
    std::uint16_t entropy = 0;                     // DATA/probe: the UDP source port's entropy; ACK: echoed
    time_ns sent_ns = 0;                           // DATA/probe: when the NIC sent it; ACK: echoed (RTT)
    std::uint64_t route = 0;                       // the ToR-to-ToR path its source ToR chose (candidate::route)
};

// Two cache lines, on a line boundary: a LAPS packet's hops read the first
// line only, the RoCE model's and the schemes' fields fill the second.
// Unaligned, a record's first 64 bytes would mostly straddle two lines, and
// each hop would touch both.
struct alignas(64) packet {
    rte_mbuf* m = nullptr;
    std::uint32_t bytes = 0;                       // frame length on the wire
    topology::node_id dst = topology::no_node;     // destination host
    std::uint32_t flow = no_flow;                  // testbed flow of a DATA packet
    std::uint32_t next = no_packet;                // port queue link
    std::uint32_t hash = 0;                        // outer 5-tuple hash (ECMP of plain packets)
    std::uint32_t link_epoch = 0;                  // of the link it is crossing (cut links lose it)
    std::uint32_t ingress = 0xffffffffu;           // port it arrived through (PFC accounting); none at its source
    std::array<topology::node_id, tables::max_anchors> anchors{};
    std::uint8_t anchor_count = 0;
    std::uint8_t anchor_index = 0;
    std::uint8_t hops = 0;                         // loop guard
    packet_class cls = packet_class::plain;
    bool priority = false;                         // DSCP 46: strict-priority queue
    bool ect = false;                              // ECN-capable: may be CE-marked
    bool retransmit = false;
    bool corrupted = false;                        // the next receiving port drops it (FCS)
    carrier kind = carrier::plain;
    bool ce = false;                               // CE mark of a record without an mbuf (RoCE)
    // The RoCE NIC model's DATA its host's NIC queued on a port (TX
    // scheduler room). Here, not in `roce`: every dequeue reads it, and the
    // first 64 bytes are all a LAPS packet's hops touch.
    bool nic_queued = false;

    // The RoCE NIC model's fields (fabric/hosts/roce_nic.hpp).
    roce_fields roce;
    // The scheme's own fields; zero on a new record.
    alignas(8) std::array<std::byte, scheme_header_bytes> scheme_header{};

    bool laps() const noexcept { return kind == carrier::laps; }

    // A LAPS packet at node `at`: the index of its first anchor not yet
    // reached once `at` counts as visited (anchors are visited in order).
    std::uint8_t anchor_index_at(topology::node_id at) const noexcept
    {
        std::uint8_t index = anchor_index;
        while (index < anchor_count && anchors[index] == at) {
            ++index;
        }
        return index;
    }
    // Where it goes from `at`: that anchor, else its destination.
    topology::node_id target_at(topology::node_id at) const noexcept
    {
        const std::uint8_t index = anchor_index_at(at);
        return index < anchor_count ? anchors[index] : dst;
    }
};
static_assert(sizeof(packet) == 128, "a packet record is two cache lines");

class packet_pool {
public:
    std::uint32_t alloc()
    {
        if (!_free.empty()) {
            const std::uint32_t i = _free.back();
            _free.pop_back();
            _slots[i] = packet{};
            return i;
        }
        _slots.emplace_back();
        return static_cast<std::uint32_t>(_slots.size() - 1);
    }

    void release(std::uint32_t i)
    {
        _slots[i].m = nullptr;
        _free.push_back(i);
    }

    packet& operator[](std::uint32_t i) noexcept { return _slots[i]; }
    const packet& operator[](std::uint32_t i) const noexcept { return _slots[i]; }

    std::size_t live() const noexcept { return _slots.size() - _free.size(); }
    std::size_t capacity() const noexcept { return _slots.size(); }

private:
    std::vector<packet> _slots;
    std::vector<std::uint32_t> _free;
};

// A FIFO of packet records linked through packet::next.
struct packet_fifo {
    std::uint32_t head = no_packet;
    std::uint32_t tail = no_packet;
    std::uint32_t count = 0;
    std::uint64_t bytes = 0;

    bool empty() const noexcept { return head == no_packet; }

    void push(packet_pool& pool, std::uint32_t i) noexcept
    {
        pool[i].next = no_packet;
        if (tail == no_packet) {
            head = i;
        } else {
            pool[tail].next = i;
        }
        tail = i;
        ++count;
        bytes += pool[i].bytes;
    }

    std::uint32_t pop(packet_pool& pool) noexcept
    {
        const std::uint32_t i = head;
        head = pool[i].next;
        if (head == no_packet) {
            tail = no_packet;
        }
        --count;
        bytes -= pool[i].bytes;
        return i;
    }
};

} // namespace laps::fabric
