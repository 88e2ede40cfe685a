#include "fabric/huge_pages.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace laps::fabric {

void* map_huge(std::size_t bytes) noexcept
{
    const std::size_t length = huge_page_round(bytes);
    // Room to place the start on a 2 MB boundary; the slack is unmapped.
    void* whole = mmap(nullptr, length + huge_page_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (whole == MAP_FAILED) {
        return nullptr;
    }
    const auto start = reinterpret_cast<std::uintptr_t>(whole);
    const std::uintptr_t aligned = (start + huge_page_bytes - 1) & ~(huge_page_bytes - 1);
    if (aligned > start) {
        munmap(whole, aligned - start);
    }
    const std::uintptr_t end = start + length + huge_page_bytes;
    if (end > aligned + length) {
        munmap(reinterpret_cast<void*>(aligned + length), end - aligned - length);
    }
    void* memory = reinterpret_cast<void*>(aligned);
    madvise(memory, length, MADV_HUGEPAGE); // advice: without THP the pages stay 4 KB
    return memory;
}

void unmap_huge(void* memory, std::size_t bytes) noexcept
{
    if (memory != nullptr) {
        munmap(memory, huge_page_round(bytes));
    }
}

void* huge_page_resource::do_allocate(std::size_t bytes, std::size_t alignment)
{
    if (alignment > huge_page_bytes) {
        throw std::bad_alloc();
    }
    void* memory = map_huge(bytes);
    if (memory == nullptr) {
        throw std::bad_alloc();
    }
    return memory;
}

void huge_page_resource::do_deallocate(void* memory, std::size_t bytes, std::size_t /*alignment*/) noexcept
{
    unmap_huge(memory, bytes);
}

} // namespace laps::fabric
