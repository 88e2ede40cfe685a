#pragma once
// Memory the testbed maps itself, advised for transparent huge pages.
//
// The EAL without hugepages maps 4 KB pages, and on a fabric of a thousand
// hosts nearly every mbuf a packet touches would then be a TLB miss as well
// as a cache miss (docs/PERFORMANCE.md §17). Mappings here start on a 2 MB
// boundary and are advised with MADV_HUGEPAGE, which the kernel honours
// where THP is "madvise" (the Debian default) or "always"; where THP is off
// they are 4 KB pages as before. Results never depend on it.

#include <cstddef>
#include <memory_resource>

namespace laps::fabric {

inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

// `bytes` rounded up to whole huge pages.
constexpr std::size_t huge_page_round(std::size_t bytes) noexcept
{
    return (bytes + huge_page_bytes - 1) & ~(huge_page_bytes - 1);
}

// An anonymous mapping of huge_page_round(bytes) at a 2 MB boundary;
// nullptr when the system has no memory for it.
void* map_huge(std::size_t bytes) noexcept;
// Unmaps what map_huge(bytes) returned.
void unmap_huge(void* memory, std::size_t bytes) noexcept;

// map_huge as a memory resource: each allocation its own mapping (throws
// std::bad_alloc when there is none). Meant as the upstream of a
// std::pmr::monotonic_buffer_resource, which asks for a few large buffers
// and gives them back at its end: the LAPS hosts' engines (their objects,
// flows, windows, queues and tables) live there, a run long, so that the
// lines a packet reads in them are not each a TLB miss too (docs/PERFORMANCE.md
// §19: 8% of a k = 16 fat tree's run).
class huge_page_resource final : public std::pmr::memory_resource {
private:
    void* do_allocate(std::size_t bytes, std::size_t alignment) override;
    void do_deallocate(void* memory, std::size_t bytes, std::size_t alignment) noexcept override;
    bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
};

} // namespace laps::fabric
