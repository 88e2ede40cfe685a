// The example packets of docs/wire-format.md, for tools and the dissector test.
//   wire_examples_gen pcap FILE    all examples (and a few variants) into a pcap
//   wire_examples_gen hexdump      markdown hex dumps, as pasted into the doc
#include "tests/unit/wire/examples.hpp"
#include "tests/unit/wire/pcap_writer.hpp"

#include <cstdio>
#include <cstring>
#include <exception>

namespace {

namespace ex = laps::test::wire_examples;

void hexdump(const laps::test::bytes& b)
{
    for (std::size_t i = 0; i < b.size(); i += 16) {
        std::printf("%04zx ", i);
        for (std::size_t j = i; j < i + 16 && j < b.size(); ++j) {
            std::printf(" %02x", b[j]);
        }
        std::printf("\n");
    }
}

// A DATA packet with 4 anchors, the RETRANSMIT flag and anchor_index 1, an
// ACK with ECN_ECHO and a DATA with PULL: the dissector test checks flags and
// anchor lists on them.
std::vector<laps::test::bytes> variants()
{
    laps::wire::packet_spec s = ex::data_spec();
    const std::uint32_t four[] = {1, 2, 3, 0xfffffffe};
    s.header.set_anchors(four);
    s.header.anchor_index = 1;
    s.header.flags = laps::wire::flag_retransmit;
    laps::wire::packet_spec ack = s;
    ack.header = laps::wire::ack_header_for(
        s.header, true, static_cast<laps::common::time_ns>(ex::data_time) + 800);
    ack.dst_ip = 0x0a000001;
    laps::wire::packet_spec pull = ex::data_spec(); // a receiver-paced flow's DATA asking for a credit
    pull.header.flags = laps::wire::flag_pull;
    return {ex::encode(ex::sender_config(), s, ex::host_frame()),
            ex::encode(ex::receiver_config(), ack),
            ex::encode(ex::sender_config(), pull, ex::host_frame())};
}

} // namespace

int main(int argc, char** argv)
try {
    if (argc == 3 && std::strcmp(argv[1], "pcap") == 0) {
        laps::test::pcap_writer out(argv[2]);
        std::uint64_t t = 1'700'000'000'000'000;
        for (const auto& e : ex::all()) {
            out.write(e.packet, t++);
        }
        for (const auto& v : variants()) {
            out.write(v, t++);
        }
        return 0;
    }
    if (argc == 2 && std::strcmp(argv[1], "hexdump") == 0) {
        for (const auto& e : ex::all()) {
            std::printf("<!-- example: %s -->\n```text\n", e.name.c_str());
            hexdump(e.packet);
            std::printf("```\n\n");
        }
        return 0;
    }
    std::fprintf(stderr, "usage: %s pcap FILE | hexdump\n", argv[0]);
    return 2;
} catch (const std::exception& e) {
    std::fprintf(stderr, "wire_examples_gen: %s\n", e.what());
    return 1;
}
