//! Whether an address is one the host may reach on a caller's word: a
//! globally routable unicast address, never loopback, private, link-local
//! (cloud metadata) or other special-purpose space.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `ip` is a globally routable unicast address we may connect to.
/// False for loopback, private, link-local (cloud metadata), CGNAT, multicast,
/// broadcast, documentation, benchmarking and reserved space; IPv6 addresses
/// that embed an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by it.
pub fn is_public_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let special = ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || a == 0 // "this network"
        || (a == 100 && (b & 0xc0) == 64) // CGNAT 100.64/10
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments 192.0.0/24
        || (a == 198 && (b & 0xfe) == 18) // benchmarking 198.18/15
        || a >= 240; // reserved 240/4
    !special
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    // Only 2000::/3 is allocated for global unicast; this also excludes
    // ::, ::1, fc00::/7, fe80::/10, ff00::/8 and 100::/64.
    let global_unicast = (s[0] & 0xe000) == 0x2000;
    let special = match (s[0], s[1]) {
        (0x2001, ..0x0200) => true, // IETF assignments 2001::/23 (Teredo, benchmarking)
        (0x2001, 0x0db8) => true,   // documentation 2001:db8::/32
        (0x3fff, ..0x1000) => true, // documentation 3fff::/20
        _ => false,
    };
    global_unicast && !special
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`, which includes `::` and `::1`), NAT64 (`64:ff9b::/96`) or
/// 6to4 (`2002::/16`) address; a connection to it reaches that IPv4 host.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let from = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        [0, 0, 0, 0, 0, 0 | 0xffff, hi, lo] => Some(from(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(from(hi, lo)),
        [0x2002, hi, lo, ..] => Some(from(hi, lo)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_addresses_are_told_apart_from_special_ones() {
        let cases = [
            ("8.8.8.8", true),
            ("1.1.1.1", true),
            ("172.32.0.1", true),
            ("100.128.0.1", true),
            ("198.20.0.1", true),
            ("2606:4700:4700::1111", true),
            ("2a00:1450::1", true),
            ("::ffff:8.8.8.8", true),
            ("64:ff9b::808:808", true),
            ("2002:808:808::1", true),
            ("0.0.0.0", false),
            ("0.1.2.3", false),
            ("127.0.0.1", false),
            ("127.255.0.1", false),
            ("10.1.2.3", false),
            ("172.16.0.1", false),
            ("172.31.255.255", false),
            ("192.168.1.1", false),
            ("169.254.169.254", false),
            ("100.64.0.1", false),
            ("100.127.255.255", false),
            ("192.0.0.8", false),
            ("192.0.2.1", false),
            ("198.51.100.1", false),
            ("203.0.113.1", false),
            ("198.18.0.1", false),
            ("198.19.255.255", false),
            ("224.0.0.1", false),
            ("239.255.255.250", false),
            ("240.0.0.1", false),
            ("255.255.255.255", false),
            ("::", false),
            ("::1", false),
            ("fc00::1", false),
            ("fd12:3456::1", false),
            ("fe80::1", false),
            ("ff02::1", false),
            ("2001:db8::1", false),
            ("3fff::1", false),
            ("3fff:fff::1", false),
            ("3fff:1000::1", true),
            ("2001:200::1", true),
            ("2001::1", false),
            ("100::1", false),
            ("::ffff:127.0.0.1", false),
            ("::ffff:169.254.169.254", false),
            ("::ffff:10.0.0.1", false),
            ("::127.0.0.1", false),
            ("64:ff9b::7f00:1", false),
            ("2002:a00:1::1", false),
        ];
        for (ip, public) in cases {
            let addr: IpAddr = ip.parse().expect("a valid address literal");
            assert_eq!(is_public_address(addr), public, "{ip}");
        }
    }
}
