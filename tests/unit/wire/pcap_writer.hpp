#pragma once
// Writes frames to a classic libpcap file (LINKTYPE_ETHERNET, microsecond
// timestamps), for Wireshark/tshark checks and golden captures. Header-only.

#include <cstdint>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace laps::test {

class pcap_writer {
public:
    explicit pcap_writer(const std::string& path) : _out(path, std::ios::binary)
    {
        if (!_out) {
            throw std::runtime_error("pcap_writer: cannot open " + path);
        }
        put32(0xa1b2c3d4); // magic, written in host order: readers detect it
        put16(2);
        put16(4);
        put32(0); // thiszone
        put32(0); // sigfigs
        put32(65535);
        put32(1); // LINKTYPE_ETHERNET
    }

    // `time_us` is the capture time in microseconds since the epoch.
    void write(std::span<const std::uint8_t> frame, std::uint64_t time_us = 0)
    {
        put32(static_cast<std::uint32_t>(time_us / 1'000'000));
        put32(static_cast<std::uint32_t>(time_us % 1'000'000));
        put32(static_cast<std::uint32_t>(frame.size()));
        put32(static_cast<std::uint32_t>(frame.size()));
        _out.write(reinterpret_cast<const char*>(frame.data()),
                   static_cast<std::streamsize>(frame.size()));
        if (!_out) {
            throw std::runtime_error("pcap_writer: write failed");
        }
    }

private:
    void put32(std::uint32_t v) { _out.write(reinterpret_cast<const char*>(&v), sizeof v); }
    void put16(std::uint16_t v) { _out.write(reinterpret_cast<const char*>(&v), sizeof v); }

    std::ofstream _out;
};

} // namespace laps::test
