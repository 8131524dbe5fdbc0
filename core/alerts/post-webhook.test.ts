import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../net/public-address.js';

describe('which webhook addresses are private', () => {
  it('when an address is loopback, private, link-local, shared, multicast or unspecified then it is not public, in either family', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255',
      '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:a00:1', 'not an address',
      // IPv4 carried in IPv6, to whatever IPv4 host it names: NAT64, local NAT64, 6to4, Teredo, IPv4-compatible.
      '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b:1::a00:1', '2002:7f00:1::1', '2001:0:4136:e378::1', '::7f00:1', '100::1', '2001:db8::1']) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });

  it('when an address is a public one then it is public', () => {
    for (const address of ['8.8.8.8', '93.184.216.34', '172.32.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8', '::ffff:808:808']) expect(isPublicAddress(address), address).toBe(true);
  });
});
