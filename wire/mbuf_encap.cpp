#include "wire/mbuf_encap.hpp"

#include <rte_mbuf_dyn.h>

namespace laps::wire {

namespace {

// Whether `headers` bytes of headers in front of `inner` bytes of host frame
// make a packet IPv4 and the fabric can carry.
encap_error length_check(const outer_config& cfg, std::size_t headers, std::uint32_t inner) noexcept
{
    const std::size_t ip_length = headers - ether_size + inner;
    if (ip_length > 0xFFFF) {
        return encap_error::too_long;
    }
    if (cfg.mtu != 0 && ip_length > cfg.mtu) {
        return encap_error::over_mtu;
    }
    return encap_error::ok;
}

encap_error check(const outer_config& cfg, const packet_spec& spec,
                  std::uint32_t inner_length) noexcept
{
    const laps_header& h = spec.header;
    if (h.type != packet_type::data || h.anchor_count > max_anchors ||
        h.anchor_index > h.anchor_count || inner_length < ether_size) {
        return encap_error::bad_header;
    }
    return length_check(cfg, headers_size(h), inner_length);
}

// Where a prepended host frame lies in its buffer: data offset and length
// at the time of the prepend; 0 when the frame was chained instead.
struct frame_place {
    std::uint16_t data_off;
    std::uint16_t length;
};

int frame_field_offset = -1; // the dynamic field; -1 until registered

frame_place& place_of(rte_mbuf* m) noexcept
{
    return *RTE_MBUF_DYNFIELD(m, frame_field_offset, frame_place*);
}

frame_place place_of(const rte_mbuf* m) noexcept
{
    return frame_field_offset >= 0 ? *RTE_MBUF_DYNFIELD(m, frame_field_offset, const frame_place*) : frame_place{0, 0};
}

} // namespace

bool register_frame_field() noexcept
{
    if (frame_field_offset >= 0) {
        return true;
    }
    static const rte_mbuf_dynfield field{"laps_host_frame_place", sizeof(frame_place), alignof(frame_place), 0};
    frame_field_offset = rte_mbuf_dynfield_register(&field);
    return frame_field_offset >= 0;
}

namespace {

// The packet: `size` bytes of headers in front of the host frame at `place`;
// the frame's second reference by a plain store (no other owner).
void place_headers(rte_mbuf* host_frame, frame_place place, std::uint16_t size) noexcept
{
    host_frame->data_off = static_cast<std::uint16_t>(place.data_off - size);
    host_frame->data_len = static_cast<std::uint16_t>(place.length + size);
    host_frame->pkt_len = host_frame->data_len;
    // The RX metadata described the host frame, not this packet.
    host_frame->ol_flags = 0;
    host_frame->packet_type = RTE_PTYPE_UNKNOWN;
    host_frame->l2_len = ether_size;
    host_frame->l3_len = ipv4_size;
    rte_mbuf_refcnt_set(host_frame, 2);
}

} // namespace

rte_mbuf* first_transmission(rte_mbuf* host_frame, rte_mempool* header_pool, const outer_config& cfg,
                             std::uint16_t size, bool& chained, encap_error& error) noexcept
{
    const bool in_place = frame_field_offset >= 0 && host_frame->nb_segs == 1 && RTE_MBUF_DIRECT(host_frame) &&
                          rte_mbuf_refcnt_read(host_frame) == 1 && rte_pktmbuf_headroom(host_frame) >= size &&
                          length_check(cfg, size, rte_pktmbuf_pkt_len(host_frame)) == encap_error::ok;
    chained = !in_place;
    if (in_place) {
        const frame_place place{host_frame->data_off, host_frame->data_len};
        place_of(host_frame) = place;
        place_headers(host_frame, place, size);
        error = encap_error::ok;
        return host_frame;
    }
    if (frame_field_offset >= 0) {
        place_of(host_frame) = frame_place{0, 0}; // a resend chains it as it is
    }
    return chain_header(host_frame, header_pool, cfg, size, error);
}

std::uint32_t sent_frame_length(const rte_mbuf* kept) noexcept
{
    const frame_place place = place_of(kept);
    return place.length != 0 ? place.length : rte_pktmbuf_pkt_len(kept);
}

rte_mbuf* resend_packet(rte_mbuf* kept, rte_mempool* pool, const outer_config& cfg, std::uint16_t size,
                        encap_error& error) noexcept
{
    const frame_place place = place_of(static_cast<const rte_mbuf*>(kept));
    if (place.length == 0) {
        return chain_header(kept, pool, cfg, size, error);
    }
    if (rte_mbuf_refcnt_read(kept) == 1 && place.data_off >= size) {
        // Every earlier transmission has let go of the buffer (sent, or
        // copied and freed by a link): nobody reads its headroom any more,
        // so the resend goes in place like the first.
        place_headers(kept, place, size);
        error = encap_error::ok;
        return kept;
    }
    // The kept mbuf's own offsets may have been moved by whoever took the
    // first transmission; an indirect mbuf describes the host frame alone.
    rte_mbuf* frame = rte_pktmbuf_alloc(pool);
    if (frame == nullptr) {
        error = encap_error::no_header_mbuf;
        return nullptr;
    }
    rte_pktmbuf_attach(frame, kept);
    frame->data_off = place.data_off;
    frame->data_len = place.length;
    frame->pkt_len = place.length;
    rte_mbuf* packet = chain_header(frame, pool, cfg, size, error);
    if (packet == nullptr) {
        rte_pktmbuf_free(frame);
        return nullptr;
    }
    // chain_header added the packet's reference; this function keeps none.
    rte_mbuf_refcnt_update(frame, -1);
    return packet;
}

std::string_view to_string(encap_error e) noexcept
{
    switch (e) {
    case encap_error::ok:
        return "encap_ok";
    case encap_error::no_headroom:
        return "encap_no_headroom";
    case encap_error::bad_header:
        return "encap_bad_header";
    case encap_error::too_long:
        return "encap_too_long";
    case encap_error::over_mtu:
        return "encap_over_mtu";
    case encap_error::too_many_segs:
        return "encap_too_many_segs";
    case encap_error::no_header_mbuf:
        return "encap_no_header_mbuf";
    case encap_error::count_:
        break;
    }
    return "encap_unknown";
}

encap_error encapsulate(rte_mbuf* host_frame, const outer_config& cfg,
                        const packet_spec& spec) noexcept
{
    const std::uint32_t inner = rte_pktmbuf_pkt_len(host_frame);
    if (const encap_error e = check(cfg, spec, inner); e != encap_error::ok) {
        return e;
    }
    const auto size = static_cast<std::uint16_t>(headers_size(spec.header));
    if (rte_pktmbuf_headroom(host_frame) < size) {
        return encap_error::no_headroom;
    }
    auto* p = rte_pktmbuf_mtod_offset(host_frame, std::uint8_t*, -static_cast<int>(size));
    // check() accepted everything encode_headers() checks, so this writes.
    encode_headers({p, size}, cfg, spec, inner);
    rte_pktmbuf_prepend(host_frame, size);
    host_frame->l2_len = ether_size;
    host_frame->l3_len = ipv4_size;
    return encap_error::ok;
}

rte_mbuf* chain_header(rte_mbuf* host_frame, rte_mempool* header_pool, const outer_config& cfg,
                       std::uint16_t size, encap_error& error) noexcept
{
    const std::uint32_t inner = rte_pktmbuf_pkt_len(host_frame);
    error = length_check(cfg, size, inner);
    if (error != encap_error::ok) {
        return nullptr;
    }
    if (host_frame->nb_segs >= RTE_MBUF_MAX_NB_SEGS) {
        error = encap_error::too_many_segs;
        return nullptr;
    }
    rte_mbuf* h = rte_pktmbuf_alloc(header_pool);
    if (h == nullptr) {
        error = encap_error::no_header_mbuf;
        return nullptr;
    }
    if (rte_pktmbuf_append(h, size) == nullptr) {
        // A header pool whose mbufs cannot hold 86 bytes: a setup error.
        rte_pktmbuf_free(h);
        error = encap_error::no_header_mbuf;
        return nullptr;
    }
    for (rte_mbuf* seg = host_frame; seg != nullptr; seg = seg->next) {
        rte_mbuf_refcnt_update(seg, 1);
    }
    h->next = host_frame;
    h->nb_segs = static_cast<std::uint16_t>(host_frame->nb_segs + 1);
    h->pkt_len = size + inner;
    h->port = host_frame->port;
    h->l2_len = ether_size;
    h->l3_len = ipv4_size;
    error = encap_error::ok;
    return h;
}

rte_mbuf* encapsulate_chained(rte_mbuf* host_frame, rte_mempool* header_pool,
                              const outer_config& cfg, const packet_spec& spec,
                              encap_error* error) noexcept
{
    encap_error dummy;
    encap_error& e = error != nullptr ? *error : dummy;
    const std::uint32_t inner = rte_pktmbuf_pkt_len(host_frame);
    e = check(cfg, spec, inner);
    if (e != encap_error::ok) {
        return nullptr;
    }
    const auto size = static_cast<std::uint16_t>(headers_size(spec.header));
    rte_mbuf* h = chain_header(host_frame, header_pool, cfg, size, e);
    if (h != nullptr) {
        encode_headers({rte_pktmbuf_mtod(h, std::uint8_t*), size}, cfg, spec, inner);
    }
    return h;
}

rte_mbuf* decapsulate(rte_mbuf* m, const parsed_packet& parsed) noexcept
{
    const std::uint16_t off = parsed.inner_offset;
    const std::uint32_t inner = parsed.header.inner_length;
    if (parsed.header.type != packet_type::data || off > rte_pktmbuf_data_len(m) ||
        rte_pktmbuf_pkt_len(m) < std::uint32_t{off} + inner) {
        return nullptr;
    }
    const std::uint32_t tail = rte_pktmbuf_pkt_len(m) - off - inner;
    // Check the tail before changing anything: rte_pktmbuf_trim works on the
    // last segment only. (Single segment: tail <= data_len - off always.)
    if (tail > rte_pktmbuf_data_len(rte_pktmbuf_lastseg(m))) {
        return nullptr;
    }
    rte_pktmbuf_adj(m, off);
    if (tail != 0) {
        rte_pktmbuf_trim(m, static_cast<std::uint16_t>(tail));
    }
    // The RX metadata described the outer packet.
    m->packet_type = RTE_PTYPE_UNKNOWN;
    return m;
}

} // namespace laps::wire
