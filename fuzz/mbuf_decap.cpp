// The mbuf parser, classification and decapsulation on any bytes, cut into
// one to three segments as a NIC or a chained packet would present them:
// no read outside the chain, and every mbuf back in its pool afterwards.
#include "wire/mbuf_encap.hpp"
#include "wire/mbuf_parse.hpp"

#include <rte_eal.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <unistd.h>

namespace {

rte_mempool* pool = nullptr;

rte_mbuf* chain_of(const std::uint8_t* data, std::size_t size, unsigned segments)
{
    rte_mbuf* head = nullptr;
    std::size_t off = 0;
    for (unsigned s = 0; s < segments; ++s) {
        const std::size_t left = size - off;
        const std::size_t n = s + 1 == segments ? left : std::min<std::size_t>(left, left / (segments - s) + 7);
        rte_mbuf* m = rte_pktmbuf_alloc(pool);
        if (m == nullptr || n > rte_pktmbuf_tailroom(m)) {
            rte_pktmbuf_free(m);
            rte_pktmbuf_free(head);
            return nullptr;
        }
        std::copy_n(data + off, n, rte_pktmbuf_mtod(m, std::uint8_t*));
        m->data_len = static_cast<std::uint16_t>(n);
        m->pkt_len = static_cast<std::uint32_t>(n);
        off += n;
        if (head == nullptr) {
            head = m;
        } else if (rte_pktmbuf_chain(head, m) != 0) {
            rte_pktmbuf_free(m);
            rte_pktmbuf_free(head);
            return nullptr;
        }
    }
    return head;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    const std::string prefix = "--file-prefix=laps-fuzz-" + std::to_string(getpid());
    const char* args[] = {"fuzz", "--no-huge", "--no-pci", "--no-shconf", "-m", "256", prefix.c_str(),
                          "--log-level=lib.eal:error", "--no-telemetry"};
    if (rte_eal_init(static_cast<int>(std::size(args)), const_cast<char**>(args)) < 0) {
        __builtin_trap();
    }
    pool = rte_pktmbuf_pool_create("fuzz_pool", 63, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    if (pool == nullptr) {
        __builtin_trap();
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1 || size > 3 * 2000) {
        return 0;
    }
    rte_mbuf* m = chain_of(data + 1, size - 1, 1 + data[0] % 3);
    if (m == nullptr) {
        return 0;
    }
    (void)laps::wire::classify(m);
    const auto r = laps::wire::parse(m, laps::wire::default_udp_port, 4096);
    if (r.ok() && r.packet.header.type == laps::wire::packet_type::data) {
        rte_mbuf* frame = laps::wire::decapsulate(m, r.packet);
        rte_pktmbuf_free(frame != nullptr ? frame : m);
    } else {
        rte_pktmbuf_free(m);
    }
    if (rte_mempool_in_use_count(pool) != 0) {
        __builtin_trap(); // decapsulation lost or kept a segment
    }
    return 0;
}
