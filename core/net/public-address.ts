import net from 'node:net';

// Which IP addresses belong to someone on the internet, as opposed to a private network, this
// host, a link or a documentation range. Webhooks are sent to public addresses only
// (core/alerts/post-webhook.ts); the dashboard's per-address sign-in budget counts public
// client addresses only (core/dashboard-auth/sign-in.ts).

const privateRanges = new net.BlockList();
for (const [address, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) privateRanges.addSubnet(address, prefix, 'ipv4');
// Besides loopback, unique-local, link-local and multicast: the IPv6 forms that carry an IPv4
// address to it, whatever that address is (a gateway translates them where the network has one:
// NAT64 on IPv6-only clusters, 6to4, Teredo; IPv4-compatible ::a.b.c.d), and the discard and
// documentation prefixes.
for (const [address, prefix] of [
  ['::', 96], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
  ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['2002::', 16], ['2001::', 32], ['100::', 64], ['2001:db8::', 32],
] as const) privateRanges.addSubnet(address, prefix, 'ipv6');

/** True for an address outside the private, loopback, link-local, shared and multicast ranges. */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return false;
  // BlockList judges an IPv4 address written as IPv6 (::ffff:10.0.0.1, ::ffff:a00:1) by its IPv4 ranges.
  return !privateRanges.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

