#include "wire/ack_run.hpp"

#include "wire/bytes.hpp"

namespace laps::wire {

void write_run_header(std::uint8_t* out, std::size_t entries, std::uint32_t ecn_echo_bits) noexcept
{
    out[run_off::count] = static_cast<std::uint8_t>(entries);
    out[1] = 0;
    out[2] = 0;
    out[3] = 0;
    store_be32(out + run_off::ecn_echo, ecn_echo_bits & ((std::uint32_t{1} << max_run_entries) - 1));
}

void write_run_entry(std::uint8_t* block, std::size_t i, const run_entry& entry) noexcept
{
    std::uint8_t* e = block + run_off::entries + run_entry_size * i;
    store_be32(e + run_entry_off::seq, entry.seq);
    store_be32(e + run_entry_off::latency_delta, static_cast<std::uint32_t>(entry.latency_delta));
    store_be16(e + run_entry_off::time_echo, entry.time_echo);
    store_be16(e + run_entry_off::acked_bytes, entry.acked_bytes);
}

void write_run_block(std::uint8_t* out, std::span<const run_entry> entries, std::uint32_t ecn_echo_bits) noexcept
{
    write_run_header(out, entries.size(), ecn_echo_bits);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        write_run_entry(out, i, entries[i]);
    }
}

answer_fields read_run_entry(const std::uint8_t* block, std::size_t i, std::int64_t base_latency) noexcept
{
    const std::uint8_t* e = block + run_off::entries + run_entry_size * i;
    answer_fields a;
    a.seq = load_be32(e + run_entry_off::seq);
    a.latency_ns = base_latency + static_cast<std::int32_t>(load_be32(e + run_entry_off::latency_delta));
    a.time_echo = load_be16(e + run_entry_off::time_echo);
    a.acked_bytes = load_be16(e + run_entry_off::acked_bytes);
    a.ecn_echo = ((load_be32(block + run_off::ecn_echo) >> i) & 1u) != 0;
    return a;
}

} // namespace laps::wire
