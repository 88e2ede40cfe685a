#include "tables/address.hpp"

#include <gtest/gtest.h>

using laps::tables::address;

TEST(Address, Ipv4IsStoredMappedAndPrintsBack)
{
    const auto a = address::parse("10.0.0.1");
    ASSERT_TRUE(a);
    EXPECT_TRUE(a->is_ipv4());
    EXPECT_EQ(a->ipv4_host_order(), 0x0a000001u);
    EXPECT_EQ(*a, address::ipv4(0x0a000001u));
    EXPECT_EQ(a->to_string(), "10.0.0.1");
}

TEST(Address, Ipv6ParsesAndDiffersFromIpv4)
{
    const auto a = address::parse("fd00::1");
    ASSERT_TRUE(a);
    EXPECT_FALSE(a->is_ipv4());
    EXPECT_EQ(a->to_string(), "fd00::1");
    EXPECT_NE(*a, address::ipv4(1));
}

TEST(Address, RejectsGarbage)
{
    EXPECT_FALSE(address::parse("10.0.0"));
    EXPECT_FALSE(address::parse("host-1"));
    EXPECT_FALSE(address::parse(""));
}
