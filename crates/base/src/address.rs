//! Which addresses Hearth lets anything reach: a pure classification of
//! every address class that is not the public internet, shared by the
//! proxy (which checks every address it connects to) and the app (which
//! checks the hosts an MCP App's view declares, before the browser may
//! reach them).
//!
//! The rule is "public unicast only". IPv4 is checked against the special
//! ranges of the IANA registry; IPv6 must be global unicast (2000::/3) and
//! outside the special ranges inside it. IPv6 forms that carry an IPv4
//! address (mapped, compatible, 6to4) are judged by the address they carry.
//! A host given as a name is judged by what the name alone says
//! ([`local_host`]): `localhost`, `.local` and the other local-network
//! suffixes, a name of one label, and every spelling of an IP address the
//! browser's URL parser reads as one.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of address an IP is, as far as fetching is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// Routable on the internet: the only class the proxy connects to.
    Public,
    /// 0.0.0.0, :: (connecting to it reaches this machine).
    Unspecified,
    /// 0.0.0.0/8 other than 0.0.0.0.
    ThisNetwork,
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// 10/8, 172.16/12, 192.168/16 (RFC 1918).
    Private,
    /// 100.64.0.0/10 (RFC 6598).
    SharedCgnat,
    /// 169.254.0.0/16, fe80::/10.
    LinkLocal,
    /// Cloud instance metadata services: 169.254.169.254, fd00:ec2::254,
    /// 100.100.100.200 (Alibaba), 192.0.0.192 (Oracle).
    CloudMetadata,
    /// 192.0.0.0/24 and 2001::/23 (IETF protocol assignments, Teredo,
    /// ORCHID, benchmarking).
    IetfProtocol,
    /// 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20.
    Documentation,
    /// 198.18.0.0/15.
    Benchmarking,
    /// 224.0.0.0/4, ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// 240.0.0.0/4, 192.88.99.0/24 (deprecated 6to4 relays), 100::/64
    /// (discard), 5f00::/16 (SRv6), IPv4-compatible and -translated IPv6,
    /// and all IPv6 outside 2000::/3.
    Reserved,
    /// fc00::/7 (unique local).
    UniqueLocal,
    /// fec0::/10 (deprecated site-local).
    SiteLocal,
    /// 64:ff9b::/96 and 64:ff9b:1::/48: NAT64 translates these to IPv4
    /// addresses on the local network's gateway.
    Nat64,
}

impl AddressClass {
    pub fn is_public(self) -> bool {
        match self {
            AddressClass::Public => true,
            AddressClass::Unspecified
            | AddressClass::ThisNetwork
            | AddressClass::Loopback
            | AddressClass::Private
            | AddressClass::SharedCgnat
            | AddressClass::LinkLocal
            | AddressClass::CloudMetadata
            | AddressClass::IetfProtocol
            | AddressClass::Documentation
            | AddressClass::Benchmarking
            | AddressClass::Multicast
            | AddressClass::Broadcast
            | AddressClass::Reserved
            | AddressClass::UniqueLocal
            | AddressClass::SiteLocal
            | AddressClass::Nat64 => false,
        }
    }

    /// "a loopback address", to finish "127.0.0.1 is …".
    pub fn describe(self) -> &'static str {
        match self {
            AddressClass::Public => "a public address",
            AddressClass::Unspecified => "the unspecified address (this machine)",
            AddressClass::ThisNetwork => "a 'this network' address (0.0.0.0/8)",
            AddressClass::Loopback => "a loopback address (this machine)",
            AddressClass::Private => "a private network address",
            AddressClass::SharedCgnat => "a carrier-grade NAT address (100.64.0.0/10)",
            AddressClass::LinkLocal => "a link-local address",
            AddressClass::CloudMetadata => "a cloud metadata service address",
            AddressClass::IetfProtocol => "an IETF protocol assignment, not a web host",
            AddressClass::Documentation => "a documentation-only address",
            AddressClass::Benchmarking => "a benchmarking address (198.18.0.0/15)",
            AddressClass::Multicast => "a multicast address",
            AddressClass::Broadcast => "the broadcast address",
            AddressClass::Reserved => "a reserved address",
            AddressClass::UniqueLocal => "a unique local IPv6 address (fc00::/7)",
            AddressClass::SiteLocal => "a site-local IPv6 address (fec0::/10)",
            AddressClass::Nat64 => "a NAT64 address, translated by the local network",
        }
    }
}

/// The verdict on one address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classified {
    pub class: AddressClass,
    /// The IPv4 address an IPv6 form carries, when that decided the class.
    pub via: Option<Ipv4Addr>,
}

impl Classified {
    fn direct(class: AddressClass) -> Self {
        Self { class, via: None }
    }
}

/// Classifies `ip`.
pub fn classify(ip: IpAddr) -> Classified {
    match ip {
        IpAddr::V4(v4) => Classified::direct(classify_v4(v4)),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    const METADATA: [[u8; 4]; 3] = [[169, 254, 169, 254], [100, 100, 100, 200], [192, 0, 0, 192]];
    if METADATA.iter().any(|m| ip.octets() == *m) {
        return AddressClass::CloudMetadata;
    }
    if ip.is_unspecified() {
        return AddressClass::Unspecified;
    }
    if ip.is_broadcast() {
        return AddressClass::Broadcast;
    }
    let table: [([u8; 4], u32, AddressClass); 15] = [
        ([0, 0, 0, 0], 8, AddressClass::ThisNetwork),
        ([10, 0, 0, 0], 8, AddressClass::Private),
        ([100, 64, 0, 0], 10, AddressClass::SharedCgnat),
        ([127, 0, 0, 0], 8, AddressClass::Loopback),
        ([169, 254, 0, 0], 16, AddressClass::LinkLocal),
        ([172, 16, 0, 0], 12, AddressClass::Private),
        ([192, 0, 0, 0], 24, AddressClass::IetfProtocol),
        ([192, 0, 2, 0], 24, AddressClass::Documentation),
        ([192, 88, 99, 0], 24, AddressClass::Reserved),
        ([192, 168, 0, 0], 16, AddressClass::Private),
        ([198, 18, 0, 0], 15, AddressClass::Benchmarking),
        ([198, 51, 100, 0], 24, AddressClass::Documentation),
        ([203, 0, 113, 0], 24, AddressClass::Documentation),
        ([224, 0, 0, 0], 4, AddressClass::Multicast),
        ([240, 0, 0, 0], 4, AddressClass::Reserved),
    ];
    table
        .iter()
        .find(|(net, prefix, _)| in_v4(ip, *net, *prefix))
        .map(|(_, _, class)| *class)
        .unwrap_or(AddressClass::Public)
}

fn in_v6(ip: Ipv6Addr, net: [u16; 8], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - prefix)
    };
    (u128::from(ip) & mask) == (u128::from(Ipv6Addr::from(net)) & mask)
}

fn classify_v6(ip: Ipv6Addr) -> Classified {
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Classified::direct(AddressClass::CloudMetadata);
    }
    if ip.is_unspecified() {
        return Classified::direct(AddressClass::Unspecified);
    }
    if ip.is_loopback() {
        return Classified::direct(AddressClass::Loopback);
    }
    let bits = u128::from(ip);
    let low_v4 = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    // ::ffff:a.b.c.d — the IPv4 address itself, reached through a v6 socket.
    if in_v6(ip, [0, 0, 0, 0, 0, 0xffff, 0, 0], 96) {
        return Classified {
            class: classify_v4(low_v4),
            via: Some(low_v4),
        };
    }
    // ::a.b.c.d (deprecated "compatible") and ::ffff:0:a.b.c.d
    // ("translated"): never a web host; say what they carry when it matters.
    if in_v6(ip, [0; 8], 96) || in_v6(ip, [0, 0, 0, 0, 0xffff, 0, 0, 0], 96) {
        let carried = classify_v4(low_v4);
        return Classified {
            class: if carried.is_public() {
                AddressClass::Reserved
            } else {
                carried
            },
            via: Some(low_v4),
        };
    }
    // 6to4: 2002:AABB:CCDD::/48 carries AA.BB.CC.DD.
    if in_v6(ip, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16) {
        let carried_v4 = Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32);
        let carried = classify_v4(carried_v4);
        return if carried.is_public() {
            Classified::direct(AddressClass::Public)
        } else {
            Classified {
                class: carried,
                via: Some(carried_v4),
            }
        };
    }
    let table: [([u16; 8], u32, AddressClass); 11] = [
        ([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96, AddressClass::Nat64),
        ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, AddressClass::Nat64),
        ([0x100, 0, 0, 0, 0, 0, 0, 0], 64, AddressClass::Reserved),
        (
            [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],
            32,
            AddressClass::Documentation,
        ),
        (
            [0x2001, 0, 0, 0, 0, 0, 0, 0],
            23,
            AddressClass::IetfProtocol,
        ),
        (
            [0x3fff, 0, 0, 0, 0, 0, 0, 0],
            20,
            AddressClass::Documentation,
        ),
        ([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16, AddressClass::Reserved),
        ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, AddressClass::UniqueLocal),
        ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, AddressClass::LinkLocal),
        ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, AddressClass::SiteLocal),
        ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, AddressClass::Multicast),
    ];
    if let Some((_, _, class)) = table
        .iter()
        .find(|(net, prefix, _)| in_v6(ip, *net, *prefix))
    {
        return Classified::direct(*class);
    }
    if !in_v6(ip, [0x2000, 0, 0, 0, 0, 0, 0, 0], 3) {
        return Classified::direct(AddressClass::Reserved);
    }
    Classified::direct(AddressClass::Public)
}

/// An address the proxy will not connect to, with the reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockedAddress {
    pub address: IpAddr,
    pub class: AddressClass,
    pub via: Option<Ipv4Addr>,
}

impl fmt::Display for BlockedAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.via {
            Some(v4) => write!(
                f,
                "{} carries the IPv4 address {v4}, which is {}",
                self.address,
                self.class.describe()
            ),
            None => write!(f, "{} is {}", self.address, self.class.describe()),
        }
    }
}

/// `Ok` for public addresses; the reason otherwise.
pub fn check(ip: IpAddr) -> Result<(), BlockedAddress> {
    let Classified { class, via } = classify(ip);
    if class.is_public() {
        Ok(())
    } else {
        Err(BlockedAddress {
            address: ip,
            class,
            via,
        })
    }
}

/// The address to connect to: IPv4-mapped IPv6 becomes the IPv4 it maps,
/// so what is connected to is exactly what was checked.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        IpAddr::V4(v4) => IpAddr::V4(v4),
    }
}

/// Ports the Fetch standard refuses ("bad ports"): services that speak
/// other protocols and could be confused by an HTTP request.
pub const BAD_PORTS: &[u16] = &[
    0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101,
    102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427,
    465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990,
    993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667,
    6668, 6669, 6679, 6697, 10080,
];

pub fn is_bad_port(port: u16) -> bool {
    BAD_PORTS.binary_search(&port).is_ok()
}

/// Names that reach this machine or the local network however DNS is set
/// up: `localhost` (RFC 6761), mDNS's `.local` (RFC 6762), the home
/// network's `.home.arpa` (RFC 8375), `.internal` (reserved for private
/// use) and the common `.lan` and `.intranet`.
const LOCAL_SUFFIXES: [&str; 6] = [
    "localhost",
    "local",
    "home.arpa",
    "internal",
    "lan",
    "intranet",
];

/// Why `host` — as written in a URL or a Content-Security-Policy source,
/// without a port or a wildcard — is not a public place, or `None` when
/// nothing in it says so. An IP address in any spelling the browser's URL
/// parser accepts (`127.1`, `0x7f.0.0.1`, `2130706433`, `[::ffff:7f00:1]`)
/// is judged by the proxy's rules ([`classify`]); a name is local when it
/// is `localhost` or ends in a local suffix, or has a single label (found
/// through the local network's search domains). A name that DNS points at
/// a private address cannot be told from here: only resolving it can.
pub fn local_host(host: &str) -> Option<String> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return match inner.parse::<Ipv6Addr>() {
            Ok(v6) => check(IpAddr::V6(v6)).err().map(|b| b.to_string()),
            Err(_) => Some(format!("[{inner}] is not an IPv6 address")),
        };
    }
    if ends_in_a_number(&host) {
        return match whatwg_ipv4(&host) {
            Some(v4) => check(IpAddr::V4(v4)).err().map(|b| {
                if host == v4.to_string() {
                    b.to_string()
                } else {
                    format!("{host} is the address {v4}, {}", b.class.describe())
                }
            }),
            None => Some(format!("{host} is neither a name nor an address")),
        };
    }
    if host.is_empty() {
        return Some("the host is empty".into());
    }
    if let Some(suffix) = LOCAL_SUFFIXES
        .iter()
        .find(|s| host == **s || host.ends_with(&format!(".{s}")))
    {
        return Some(format!(
            "{host} is a name on this machine or the local network (.{suffix})"
        ));
    }
    if !host.contains('.') {
        return Some(format!(
            "{host} is a name of one label, which only the local network resolves"
        ));
    }
    None
}

/// The URL standard's "ends in a number": the last label (after a trailing
/// dot) is all digits, or `0x` and hex digits. Such a host is an IPv4
/// address or no host at all.
fn ends_in_a_number(host: &str) -> bool {
    let mut labels: Vec<&str> = host.split('.').collect();
    if labels.last() == Some(&"") && labels.len() > 1 {
        labels.pop();
    }
    let last = labels.last().copied().unwrap_or("");
    (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit()))
        || last
            .strip_prefix("0x")
            .is_some_and(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The URL standard's IPv4 parser: one to four parts, each decimal, octal
/// (leading `0`) or hex (`0x`), the last filling the bytes left.
fn whatwg_ipv4(host: &str) -> Option<Ipv4Addr> {
    let mut parts: Vec<&str> = host.split('.').collect();
    if parts.last() == Some(&"") && parts.len() > 1 {
        parts.pop();
    }
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut numbers = Vec::with_capacity(parts.len());
    for part in &parts {
        let (digits, radix) =
            if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
                (hex, 16)
            } else if part.len() > 1 && part.starts_with('0') {
                (&part[1..], 8)
            } else {
                (*part, 10)
            };
        let n = if digits.is_empty() {
            0
        } else {
            u64::from_str_radix(digits, radix).ok()?
        };
        numbers.push(n);
    }
    let last = numbers.pop()?;
    if numbers.iter().any(|n| *n > 255) {
        return None;
    }
    let room = 4 - numbers.len();
    if last >= 256u64.pow(room as u32) {
        return None;
    }
    let mut address = last;
    for (i, n) in numbers.iter().enumerate() {
        address += n * 256u64.pow(3 - i as u32);
    }
    u32::try_from(address).ok().map(Ipv4Addr::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use AddressClass as C;

    fn class(s: &str) -> AddressClass {
        classify(s.parse().unwrap()).class
    }

    #[test]
    fn ipv4_classes() {
        let cases = [
            ("0.0.0.0", C::Unspecified),
            ("0.1.2.3", C::ThisNetwork),
            ("10.0.0.1", C::Private),
            ("10.255.255.255", C::Private),
            ("100.63.255.255", C::Public),
            ("100.64.0.1", C::SharedCgnat),
            ("100.127.255.255", C::SharedCgnat),
            ("100.128.0.0", C::Public),
            ("100.100.100.200", C::CloudMetadata),
            ("127.0.0.1", C::Loopback),
            ("127.255.255.254", C::Loopback),
            ("169.254.0.1", C::LinkLocal),
            ("169.254.169.254", C::CloudMetadata),
            ("172.15.255.255", C::Public),
            ("172.16.0.1", C::Private),
            ("172.31.255.255", C::Private),
            ("172.32.0.0", C::Public),
            ("192.0.0.8", C::IetfProtocol),
            ("192.0.0.192", C::CloudMetadata),
            ("192.0.2.1", C::Documentation),
            ("192.88.99.1", C::Reserved),
            ("192.168.1.1", C::Private),
            ("198.18.0.1", C::Benchmarking),
            ("198.19.255.255", C::Benchmarking),
            ("198.20.0.0", C::Public),
            ("198.51.100.7", C::Documentation),
            ("203.0.113.9", C::Documentation),
            ("224.0.0.1", C::Multicast),
            ("239.255.255.250", C::Multicast),
            ("240.0.0.1", C::Reserved),
            ("255.255.255.254", C::Reserved),
            ("255.255.255.255", C::Broadcast),
            ("1.1.1.1", C::Public),
            ("8.8.8.8", C::Public),
            ("93.184.215.14", C::Public),
            ("223.255.255.255", C::Public),
        ];
        for (ip, expected) in cases {
            assert_eq!(class(ip), expected, "{ip}");
        }
    }

    #[test]
    fn ipv6_classes() {
        let cases = [
            ("::", C::Unspecified),
            ("::1", C::Loopback),
            ("::ffff:127.0.0.1", C::Loopback),
            ("::ffff:7f00:1", C::Loopback),
            ("::ffff:10.1.2.3", C::Private),
            ("::ffff:169.254.169.254", C::CloudMetadata),
            ("::ffff:8.8.8.8", C::Public),
            ("::127.0.0.1", C::Loopback),
            ("::8.8.8.8", C::Reserved),
            ("::ffff:0:127.0.0.1", C::Loopback),
            ("::ffff:0:8.8.8.8", C::Reserved),
            ("64:ff9b::7f00:1", C::Nat64),
            ("64:ff9b::808:808", C::Nat64),
            ("64:ff9b:1::1", C::Nat64),
            ("100::1", C::Reserved),
            ("2001::1", C::IetfProtocol),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", C::IetfProtocol),
            ("2001:2::1", C::IetfProtocol),
            ("2001:db8::1", C::Documentation),
            ("2002:7f00:1::1", C::Loopback),
            ("2002:a9fe:a9fe::1", C::CloudMetadata),
            ("2002:808:808::1", C::Public),
            ("3fff::1", C::Documentation),
            ("5f00::1", C::Reserved),
            ("fc00::1", C::UniqueLocal),
            ("fd12:3456::1", C::UniqueLocal),
            ("fd00:ec2::254", C::CloudMetadata),
            ("fe80::1", C::LinkLocal),
            ("febf::1", C::LinkLocal),
            ("fec0::1", C::SiteLocal),
            ("ff02::1", C::Multicast),
            ("ff0e::1", C::Multicast),
            ("4000::1", C::Reserved),
            ("1234::1", C::Reserved),
            ("2606:4700:4700::1111", C::Public),
            ("2a00:1450:4001:80b::200e", C::Public),
        ];
        for (ip, expected) in cases {
            assert_eq!(class(ip), expected, "{ip}");
        }
    }

    #[test]
    fn refusals_say_what_an_address_carries() {
        assert_eq!(
            check("::ffff:127.0.0.1".parse().unwrap())
                .unwrap_err()
                .to_string(),
            "::ffff:127.0.0.1 carries the IPv4 address 127.0.0.1, which is a loopback address (this machine)"
        );
        assert_eq!(
            check("10.0.0.1".parse().unwrap()).unwrap_err().to_string(),
            "10.0.0.1 is a private network address"
        );
        assert_eq!(check("8.8.8.8".parse().unwrap()), Ok(()));
    }

    #[test]
    fn mapped_addresses_connect_as_the_ipv4_checked() {
        assert_eq!(
            canonical("::ffff:8.8.8.8".parse().unwrap()),
            "8.8.8.8".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            canonical("2606:4700::1".parse().unwrap()),
            "2606:4700::1".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn bad_ports_are_sorted_and_found() {
        assert!(BAD_PORTS.windows(2).all(|w| w[0] < w[1]));
        let cases = [
            (25, true),
            (22, true),
            (80, false),
            (443, false),
            (8080, false),
            (6667, true),
        ];
        for (port, bad) in cases {
            assert_eq!(is_bad_port(port), bad, "{port}");
        }
    }

    #[test]
    fn hosts_are_judged_by_every_spelling_the_browser_reads() {
        let local = [
            "127.0.0.1",
            "127.1",
            "0x7f.0.0.1",
            "0177.0.0.1",
            "2130706433",
            "0x7f000001",
            "127.0.0.1.",
            "10.0.0.5",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "0",
            "[::1]",
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
            "[fe80::1]",
            "[fd00::1]",
            "localhost",
            "LOCALHOST",
            "localhost.",
            "app.localhost",
            "printer.local",
            "nas.home.arpa",
            "db.internal",
            "router.lan",
            "printer",
            "999.1.1.1",
            "1.2.3.4.5",
            "[nonsense]",
        ];
        for host in local {
            assert!(local_host(host).is_some(), "{host} was let through");
        }
        for host in [
            "api.example.com",
            "8.8.8.8",
            "[2606:4700:4700::1111]",
            "cdn.example.org.",
            "localhost.example.com",
            "local.example.com",
        ] {
            assert_eq!(local_host(host), None, "{host}");
        }
        assert_eq!(
            local_host("0x7f.1").as_deref(),
            Some("0x7f.1 is the address 127.0.0.1, a loopback address (this machine)")
        );
        assert_eq!(
            local_host("printer.local").as_deref(),
            Some("printer.local is a name on this machine or the local network (.local)")
        );
    }
}
