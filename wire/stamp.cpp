#include "wire/stamp.hpp"

#include "wire/bytes.hpp"
#include "wire/laps_header.hpp"
#include "wire/layout.hpp"
#include "wire/time48.hpp"

namespace laps::wire {

bool stamp_departure(rte_mbuf* m, std::uint16_t udp_port, common::time_ns now) noexcept
{
    constexpr std::size_t need = outer_size + laps_off::time + 6;
    if (rte_pktmbuf_data_len(m) < need) {
        return false;
    }
    auto* p = rte_pktmbuf_mtod(m, std::uint8_t*);
    if (load_be16(p + outer_off::eth_type) != 0x0800 || p[outer_off::ip_version_ihl] != 0x45 ||
        p[outer_off::ip_protocol] != 17 || load_be16(p + outer_off::udp_dst_port) != udp_port) {
        return false;
    }
    std::uint8_t* laps = p + outer_off::laps;
    const auto type = static_cast<packet_type>(laps[laps_off::version_type] & 0x0F);
    if ((laps[laps_off::version_type] >> 4) != laps_version ||
        (type != packet_type::data && type != packet_type::probe)) {
        return false;
    }
    if ((laps[laps_off::flags] & flag_authenticated) != 0) {
        return false; // its tag covers `time`: it keeps the time it was signed with
    }
    store_be48(laps + laps_off::time, to_time48(now));
    return true;
}

} // namespace laps::wire
