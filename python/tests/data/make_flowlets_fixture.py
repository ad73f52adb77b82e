#!/usr/bin/env python3
"""Write flowlets_fixture.pcapng, the flowlet tool's parser and regression fixture (see
README.md beside it). Deterministic: the same file every time.

    python python/tests/data/make_flowlets_fixture.py [OUT]

The frames are built with dpkt (an independent packet library), the pcapng container by hand
(dpkt's writer cannot store a snap length shorter than the frame): one section, one Ethernet
interface with a 128-byte snap length and microsecond time stamps. Every frame's payload is
zeros; only its headers are captured.
"""

from __future__ import annotations

import random
import struct
import sys
from pathlib import Path
from typing import List, Tuple

import dpkt

SNAPLEN = 128
#: 2023-11-14 22:13:20 UTC, in microseconds.
T0_US = 1_700_000_000_000_000
MAC_A, MAC_B = b"\x02\x00\x00\x00\x00\x01", b"\x02\x00\x00\x00\x00\x02"


def _v4(s: str) -> bytes:
    return bytes(int(x) for x in s.split("."))


def _v6(last: int) -> bytes:
    return bytes.fromhex("20010db8000000000000000000000000")[:15] + bytes([last])


def eth(ip: dpkt.Packet, etype: int, vlan: int = 0) -> bytes:
    e = dpkt.ethernet.Ethernet(src=MAC_A, dst=MAC_B, type=etype, data=ip)
    if vlan:
        e.vlan_tags = [dpkt.ethernet.VLANtag8021Q(id=vlan, type=etype)]
        e.type = dpkt.ethernet.ETH_TYPE_8021Q
    return bytes(e)


def tcp4(src: str, dst: str, sport: int, dport: int, payload: int, flags: int = dpkt.tcp.TH_ACK) -> bytes:
    t = dpkt.tcp.TCP(sport=sport, dport=dport, flags=flags, data=b"\0" * payload)
    ip = dpkt.ip.IP(src=_v4(src), dst=_v4(dst), p=dpkt.ip.IP_PROTO_TCP, data=t)
    return eth(ip, dpkt.ethernet.ETH_TYPE_IP)


def tcp6(src: int, dst: int, sport: int, dport: int, payload: int, vlan: int = 0, hop_by_hop: bool = False) -> bytes:
    t = bytes(dpkt.tcp.TCP(sport=sport, dport=dport, flags=dpkt.tcp.TH_ACK, data=b"\0" * payload))
    if hop_by_hop:
        # A hop-by-hop options header (8 bytes: next header TCP, length 0, a PadN option).
        ip = dpkt.ip6.IP6(src=_v6(src), dst=_v6(dst), nxt=0, hlim=64, plen=8 + len(t))
        return eth(bytes(ip)[:40] + bytes([6, 0, 1, 4, 0, 0, 0, 0]) + t, dpkt.ethernet.ETH_TYPE_IP6, vlan)
    ip = dpkt.ip6.IP6(src=_v6(src), dst=_v6(dst), nxt=dpkt.ip.IP_PROTO_TCP, hlim=64, data=t, plen=len(t))
    return eth(ip, dpkt.ethernet.ETH_TYPE_IP6, vlan)


def udp4(src: str, dst: str, sport: int, dport: int, payload: bytes) -> bytes:
    u = dpkt.udp.UDP(sport=sport, dport=dport, data=payload)
    u.ulen = 8 + len(payload)
    ip = dpkt.ip.IP(src=_v4(src), dst=_v4(dst), p=dpkt.ip.IP_PROTO_UDP, data=u)
    return eth(ip, dpkt.ethernet.ETH_TYPE_IP)


def vxlan(sport: int, inner: bytes) -> bytes:
    hdr = bytes([0x08, 0, 0, 0]) + (5001 << 8).to_bytes(4, "big")  # I flag, VNI 5001
    return udp4("10.0.0.254", "10.0.1.254", sport, 4789, hdr + inner)


def others() -> List[Tuple[int, bytes, str]]:
    """Packets the tool skips, with the kind it must count them under: (µs, frame, kind)."""
    arp = bytes(dpkt.ethernet.Ethernet(src=MAC_A, dst=b"\xff" * 6, type=dpkt.ethernet.ETH_TYPE_ARP,
                                       data=dpkt.arp.ARP(sha=MAC_A, spa=_v4("10.0.0.1"), tpa=_v4("10.0.0.2"))))
    icmp = eth(dpkt.ip.IP(src=_v4("10.0.0.1"), dst=_v4("10.0.1.1"), p=dpkt.ip.IP_PROTO_ICMP,
                          data=dpkt.icmp.ICMP(type=8, data=dpkt.icmp.ICMP.Echo(id=1, seq=1, data=b"ping"))),
               dpkt.ethernet.ETH_TYPE_IP)
    icmp6 = eth(dpkt.ip6.IP6(src=_v6(1), dst=_v6(2), nxt=58, hlim=64, data=b"\x80\0\0\0\0\1\0\1", plen=8),
                dpkt.ethernet.ETH_TYPE_IP6)
    frag1 = dpkt.ip.IP(src=_v4("10.0.0.5"), dst=_v4("10.0.1.5"), p=dpkt.ip.IP_PROTO_UDP, id=7, mf=1,
                       data=b"\0" * 1480)
    frag2 = dpkt.ip.IP(src=_v4("10.0.0.5"), dst=_v4("10.0.1.5"), p=dpkt.ip.IP_PROTO_UDP, id=7, offset=1480,
                       data=b"\0" * 520)
    lldp = bytes(dpkt.ethernet.Ethernet(src=MAC_A, dst=b"\x01\x80\xc2\x00\x00\x0e", type=0x88CC, data=b"\0" * 46))
    out = [(1_000 + 40_000 * i, arp, "ARP") for i in range(4)]
    out += [(2_500 + 30_000 * i, icmp, "ICMP") for i in range(3)]
    out += [(7_700, icmp6, "ICMPv6"), (8_800, icmp6, "ICMPv6")]
    out += [(12_000, eth(frag1, dpkt.ethernet.ETH_TYPE_IP), "IPv4 fragment"),
            (12_001, eth(frag2, dpkt.ethernet.ETH_TYPE_IP), "IPv4 fragment")]
    out += [(50_000, lldp, "LLDP")]
    return out


def packets() -> List[Tuple[int, bytes, int]]:
    """(µs since T0, full frame, snap length), in capture order."""
    rnd = random.Random(26)
    pk: List[Tuple[int, bytes]] = []
    # Flow A (IPv4 TCP, 1448-byte segments at the 10G line rate, ~1.23 µs apart), in bursts
    # of 16 whose gaps are chosen across the three thresholds: 50 µs (no new flowlet at any
    # gap), 300 µs (new at 100 µs only), 800 µs and 2 ms (new at 100 and 500 µs) and, before
    # the last two bursts, 300 ms (new at every gap). A pure ACK back every second segment,
    # and one in the middle of each 800 µs gap: were ACKs to extend flowlets, the 500 µs gap
    # would not split there.
    t = 0.0
    bursts = [50, 300, 800, 50, 300, 2000, 300, 50, 800, 300, 300_000, 50, 0]
    for gap in bursts:
        for i in range(16):
            pk.append((round(t), tcp4("10.0.0.1", "10.0.1.1", 40000, 5001, 1448)))
            if i % 2:
                pk.append((round(t) + 5, tcp4("10.0.1.1", "10.0.0.1", 5001, 40000, 0)))
            t += 1.23
        if gap == 800:
            pk.append((round(t) + 400, tcp4("10.0.1.1", "10.0.0.1", 5001, 40000, 0)))
        t += gap
    # Flow B (IPv6 TCP on VLAN 10, 1000-byte segments), 120 segments with gaps drawn from
    # 20 / 150 / 800 µs.
    t = 300.0
    for _ in range(120):
        pk.append((round(t), tcp6(1, 2, 443, 51000, 1000, vlan=10)))
        t += rnd.choice((20, 150, 800))
    # Flow C (UDP, 200 bytes) every 400 µs for 100 ms.
    for k in range(250):
        pk.append((150 + 400 * k, udp4("10.0.0.3", "10.0.1.3", 9000, 9000, b"\0" * 200)))
    # Flow D: TCP inside VXLAN (the inner 5-tuple is the flow; the outer source port changes),
    # bursts of 10 segments every 2.5 ms from 5 ms on.
    inner = tcp4("192.168.0.1", "192.168.0.2", 33000, 80, 1448)
    for b in range(10):
        for i in range(10):
            pk.append((5_000 + 2_500 * b + 2 * i, vxlan(49152 + (b * 10 + i) % 7, inner)))
    # Flow E: IPv6 TCP behind a hop-by-hop options header, 10 segments 30 µs apart.
    for i in range(10):
        pk.append((20_000 + 30 * i, tcp6(3, 4, 22, 60000, 512, hop_by_hop=True)))
    # A SYN (no payload) that opens a flow which never sends: it must leave no flowlet.
    pk.append((60_000, tcp4("10.0.0.9", "10.0.1.9", 41000, 80, 0, flags=dpkt.tcp.TH_SYN)))
    pk += [(t_, f) for t_, f, _ in others()]
    pk.sort(key=lambda x: x[0])
    out = [(t_, f, SNAPLEN) for t_, f in pk]
    # A frame captured with only 30 bytes: its IPv4 header is cut by the snap length.
    i = next(i for i, (t_, _, _) in enumerate(out) if t_ > 30_500)
    out.insert(i, (30_500, tcp4("10.0.0.7", "10.0.1.7", 1, 2, 100), 30))
    # One record written 3 µs out of order, as merged captures can be: the tool counts it at
    # the latest time seen.
    i = next(i for i, (t_, f, _) in enumerate(out) if t_ > 70_000 and f[34:36] == (9000).to_bytes(2, "big"))
    out[i] = (out[i - 1][0] - 3,) + out[i][1:]
    return out


def _block(typ: int, body: bytes) -> bytes:
    body += b"\0" * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack("<II", typ, n) + body + struct.pack("<I", n)


def write(path: Path) -> None:
    shb = _block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    idb = _block(1, struct.pack("<HHI", 1, 0, SNAPLEN))
    out = [shb, idb]
    for t, frame, snap in packets():
        ts = T0_US + t
        data = frame[:snap]
        out.append(_block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(data), len(frame)) + data))
    path.write_bytes(b"".join(out))


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("flowlets_fixture.pcapng")
    write(target)
    print(f"wrote {target} ({target.stat().st_size} bytes)")
