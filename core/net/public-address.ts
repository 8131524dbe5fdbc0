import net from 'node:net';

// Which IP addresses belong to someone on the internet, as opposed to a private network, this
// host, a link or a documentation range. Webhooks are sent to public addresses only
// (core/alerts/post-webhook.ts); the dashboard's per-address sign-in budget counts public
// client addresses only, IPv6 ones by their /64 (publicAddressBlock; core/dashboard-auth/sign-in.ts).

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


/** An IPv6 address's eight 16-bit groups (net.isIP has said it is one). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0]!;
  // A dotted IPv4 tail (::ffff:1.2.3.4) is the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const before = head ? head.split(':') : [];
  const after = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - before.length - after.length).fill('0');
  return [...before, ...zeros, ...after].map((group) => parseInt(group, 16));
}

/**
 * The block a public client address is counted in, or null for one that is not public: an IPv4
 * address alone (also when written as IPv6, ::ffff:a.b.c.d), an IPv6 address by its /64. One
 * IPv6 subscriber or server is handed a /64 at least and picks any address in it at will, so
 * counting per address would give one client 2^64 budgets.
 */
export function publicAddressBlock(address: string): string | null {
  if (!isPublicAddress(address)) return null;
  if (net.isIP(address) === 4) return address;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}
